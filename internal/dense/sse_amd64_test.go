package dense

func sseTile() tileFunc { return tileSSE2 }
