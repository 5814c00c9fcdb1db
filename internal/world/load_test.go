package world

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/sim"
)

func TestLoad(t *testing.T) {
	open := make(chan struct{})
	closed := make(chan struct{})
	close(closed)
	missing := filepath.Join(t.TempDir(), "missing.json")
	tests := []struct {
		name    string
		path    string
		stop    chan struct{}
		stopped bool
		fails   bool
	}{
		{"the embedded default", "", nil, false, false},
		{"with a stop that stays open", "", open, false, false},
		{"a stop already closed gives up", "", closed, true, true},
		{"a missing file", missing, nil, false, true},
		{"a missing file, with a stop", missing, open, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := Load(tt.path, 3, tt.stop)
			if !tt.fails {
				require.NoError(t, err)
				assert.NotEmpty(t, w.Workspaces)
				return
			}
			require.Error(t, err)
			assert.Nil(t, w)
			assert.Equal(t, tt.stopped, errors.Is(err, sim.ErrStopped), "%v", err)
		})
	}
}

// The embedded default is made once per seed: every server of a suite
// shares it.
func TestLoadMakesTheDefaultOncePerSeed(t *testing.T) {
	a, err := Load("", 11, nil)
	require.NoError(t, err)
	b, err := Load("", 11, make(chan struct{}))
	require.NoError(t, err)
	assert.Same(t, a, b)
	c, err := Load("", 12, nil)
	require.NoError(t, err)
	assert.NotSame(t, a, c)
}
