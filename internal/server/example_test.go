package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/fwlab/fwlab/internal/server"
	"github.com/fwlab/fwlab/internal/session/sessiontest"
)

// A run is created with a POST of its spec; its complete trace is then a GET
// away, here as CSV.
func Example() {
	sessiontest.Register() // a synthetic problem that emits n records per trace
	srv, err := server.New(server.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	ts := httptest.NewServer(srv)
	defer ts.Close()

	spec := `{"problem": "test-fake", "params": {"n": 5}, "algorithms": [{"algo": "fw"}, {"algo": "ssfw-as"}], "iters": 5}`
	resp, err := http.Post(ts.URL+"/api/runs", "application/json", strings.NewReader(spec))
	if err != nil {
		panic(err)
	}
	var created struct{ ID string }
	_ = json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	fmt.Println(resp.Status, resp.Header.Get("Location") == "/api/runs/"+created.ID)

	run, _ := srv.Manager().Get(created.ID)
	select {
	case <-run.Done():
	case <-time.After(10 * time.Second):
		panic("the run did not finish")
	}
	resp, err = http.Get(ts.URL + "/api/runs/" + created.ID + "/trace?format=csv")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	lines := 0
	for sc.Scan() {
		if lines < 3 { // every column but the wall time
			cols := strings.Split(sc.Text(), ",")
			fmt.Println(strings.Join(append(cols[:5:5], cols[6:]...), ","))
		}
		lines++
	}
	fmt.Println(lines-1, "records")
	// Output:
	// 201 Created true
	// trace,algo,replication,k,passes,step,gamma,batch,active,fw_steps,away_steps,drops,cleanups,objective,gap,grad_err
	// 0,fw,0,0,0,none,0,0,1,0,0,0,0,1,1,
	// 0,fw,0,1,0.5,away,0.3333333333333333,1,2,0,0,0,0,0.5,0.5,
	// 12 records
}
