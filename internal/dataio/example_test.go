package dataio_test

import (
	"fmt"
	"strings"

	"github.com/fwlab/fwlab/internal/dataio"
)

func ExampleParseSVMLight() {
	s, err := dataio.ParseSVMLight(strings.NewReader("+1 1:0.5 3:2 # first\n-1 qid:4 2:1\n"), "train.svm")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Rows(), s.Dim, s.Labels, s.Idx, s.Val)
	_, err = dataio.ParseCSV(strings.NewReader("1,2\n3,x\n"), "X.csv")
	fmt.Println(err)
	// Output:
	// 2 3 [1 -1] [[0 2] [1]] [[0.5 2] [1]]
	// X.csv:2:3: field 2: "x" is not a finite number
}
