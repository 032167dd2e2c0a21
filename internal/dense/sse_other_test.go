//go:build !amd64

package dense

func sseTile() tileFunc { return tileGo }
