package localcluster

import (
	"testing"
	"time"
)

func TestExpand(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	got, err := expand([]byte(`a: "${NOW}", b: "${NOW-90m}", c: "${NOW+10m}", d: "${NOW-2h}"`), now)
	if err != nil {
		t.Fatal(err)
	}
	if want := `a: "2026-06-01T12:00:00Z", b: "2026-06-01T10:30:00Z", c: "2026-06-01T12:10:00Z", d: "2026-06-01T10:00:00Z"`; string(got) != want {
		t.Errorf("expand = %s\nwant %s", got, want)
	}
	if _, err := expand([]byte(`${NOW-5h5}`), now); err == nil {
		t.Error("a bad duration is not an error")
	}
}
