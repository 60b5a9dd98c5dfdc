package checks

import "testing"

// TestVersionOrder: versions of one build family compare by their numbers;
// versions of different families (words differ) do not compare.
func TestVersionOrder(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"Red Hat Enterprise Linux CoreOS 9.6.20250815-0 (Plow)", "Red Hat Enterprise Linux CoreOS 9.6.20250811-0 (Plow)", 1},
		{"5.15.0-1071-aws", "6.8.0-1021-aws", -1},
		{"containerd://1.7.10", "containerd://1.7.9", 1},
		{"v1.30.2", "v1.30.2", 0},
		{"6.8.0-1015-aws", "6.1.102-111.182.amzn2023.x86_64", 0},                  // Ubuntu vs Amazon Linux
		{"cri-o://1.33.3-5.git22d4f06.el9", "cri-o://1.33.3-3.giteaa7ec8.el9", 0}, // build hashes differ
	} {
		if got := versionOrder(tc.a, tc.b); got != tc.want {
			t.Errorf("versionOrder(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
