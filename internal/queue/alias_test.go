package queue

import "github.com/fwlab/fwlab/internal/store/pgstore"

type pgstoreStore = pgstore.Store

var pgstoreOpen = pgstore.Open
