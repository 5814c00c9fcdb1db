package check_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestStatusForward(t *testing.T) {
	k := newChecker(t)
	assert.Empty(t, begin(k, "mk_a_key_0001", "GET", "/generations/5", "").end(200, generation(5, "processing")))
	// An answer that began before the last one ended may be older: not compared.
	slow := begin(k, "mk_a_key_0001", "GET", "/assets/5", "")
	assert.Empty(t, begin(k, "mk_a_key_0001", "GET", "/generations/5", "").end(200, generation(5, "completed")))
	assert.Empty(t, slow.end(200, generation(5, "processing")))
	// One that began after is.
	assert.Equal(t, []string{"status.forward $.assets[0].status"}, begin(k, "mk_a_key_0001", "GET", "/assets/5", "").end(200, generation(5, "queued")))
	assert.Equal(t, []string{"status.forward $.assets[0].status"}, begin(k, "mk_a_key_0001", "GET", "/assets/5", "").end(200, generation(5, "failed")))
	// Another workspace's asset 5 is another asset.
	assert.Empty(t, begin(k, "mk_b_key_0002", "GET", "/assets/5", "").end(200, generation(5, "queued")))
}
