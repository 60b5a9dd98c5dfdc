package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/connect"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/fixture"
)

// nodesServer serves /version and the nodes of the node-taints fixture, as
// a plain LIST (it refuses watch-lists, as a server without the feature).
func nodesServer(t *testing.T) *httptest.Server {
	set, err := fixture.Load(filepath.Join("..", "..", "testdata", "checks", "node-taints"))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := set.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	list, err := json.Marshal(corev1.NodeList{TypeMeta: metav1.TypeMeta{Kind: "NodeList", APIVersion: "v1"}, ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: snap.Nodes()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/version":
			_, _ = w.Write([]byte(`{"gitVersion":"v1.37.2"}`))
		case r.URL.Path == "/api/v1/nodes" && r.URL.Query().Get("watch") == "":
			_, _ = w.Write(list)
		default:
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"BadRequest","code":400,"message":"no watch-list here"}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// The listing commands are Options built directly and Run: taints prints
// every taint, nodes -o json the rows, and history, whose reads of
// workloads fail here, exits 2 naming the read.
func TestListingOptionsRun(t *testing.T) {
	srv := nodesServer(t)
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}

	taints := NewTaintsOptions(streams, connectTo(srv.URL))
	taints.Output = "table"
	if err := taints.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := taints.Run(context.Background()); err != nil {
		t.Fatalf("taints: %v\n%s", err, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 18 || !strings.HasPrefix(lines[0], "NODE ") || !strings.HasPrefix(lines[1], "cp-1 ") || !strings.Contains(lines[1], "node-role.kubernetes.io/control-plane") {
		t.Errorf("taints table:\n%s", out.String())
	}

	out.Reset()
	nodes := NewNodesOptions(streams, connectTo(srv.URL))
	nodes.Output = "json"
	if err := nodes.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Nodes []struct {
			Pool  string   `json:"pool"`
			Count int      `json:"count"`
			Nodes []string `json:"nodes"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || len(doc.Nodes) == 0 || doc.Nodes[0].Count != len(doc.Nodes[0].Nodes) {
		t.Errorf("nodes -o json (%v):\n%s", err, out.String())
	}

	history := NewHistoryOptions(streams, connectTo(srv.URL))
	history.Output = "table"
	err := history.Run(context.Background())
	var ee *exitError
	if !errors.As(err, &ee) || ee.Code != ExitError || !strings.Contains(err.Error(), "deployments") {
		t.Errorf("history without deployments: %v, want exit 2 naming the read", err)
	}
}

// connectTo is the cluster options of a test server.
func connectTo(host string) *connect.Options {
	o := connect.New("test")
	o.Config = &rest.Config{Host: host}
	o.Retry = fastRetry
	return o
}
