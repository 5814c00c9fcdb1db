package store

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

// owner is the owner of the tests' writes: its transaction counts the
// writes of its group, Prepare has "due" work to do in several
// transactions, and it notes what the writer asked of it.
type owner struct {
	mu        sync.Mutex
	due       int // transactions Prepare still asks for before the writes
	groups    []int
	committed int
	refused   error
	panics    []string
}

type otx struct {
	*bolt.Tx
	writes int
}

var errOwn = errors.New("a business error")

func (o *owner) Begin(btx *bolt.Tx) *otx { return &otx{Tx: btx} }
func (o *owner) Prepare(t *otx) (bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.due > 0 {
		o.due--
		return true, t.Bucket(bLog).Put([]byte(fmt.Sprint("due ", o.due)), nil)
	}
	return false, nil
}
func (o *owner) Finish(t *otx) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.groups = append(o.groups, t.writes)
	return nil
}
func (o *owner) Committed(*otx) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.committed++
	return nil
}
func (o *owner) Refused() error     { return o.refused }
func (o *owner) Own(err error) bool { return errors.Is(err, errOwn) }
func (o *owner) Panicked(r any, what string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.panics = append(o.panics, what)
	return fmt.Errorf("%s panicked: %v", what, r)
}
func (o *owner) Closed() error { return errClosed }

var errClosed = errors.New("closed")

func newWriter(t *testing.T, db *DB, o *owner) *Writer[*otx] {
	w := NewWriter[*otx](db, o, slog.New(slog.DiscardHandler))
	t.Cleanup(w.Close)
	return w
}

// put is a write of key k.
func put(k string) func(*otx) error {
	return func(t *otx) error {
		t.writes++
		return t.Bucket(bRecords).Put([]byte(k), []byte("v"))
	}
}

func has(t *testing.T, db *DB, k string) bool {
	t.Helper()
	var ok bool
	require.NoError(t, db.View(func(btx *bolt.Tx) error { ok = btx.Bucket(bRecords).Get([]byte(k)) != nil; return nil }))
	return ok
}

// within waits for a value on ch, for at most a minute: a bound on a wait
// for another goroutine, never a sleep.
func within(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(time.Minute):
		t.Fatalf("waited a minute for %s", what)
	}
}

// hold makes the next writes queue behind a held one, so that they form
// one group: it returns the release and waits for n writes to be queued.
func hold(t *testing.T, w *Writer[*otx]) (queued chan struct{}, release func()) {
	queued = make(chan struct{}, 64)
	w.OnQueued = func() {
		select {
		case queued <- struct{}{}:
		default:
		}
	}
	started, released := make(chan struct{}), make(chan struct{})
	go w.Update(func(*otx) error { close(started); <-released; return nil })
	<-started
	within(t, queued, "the held write joining the queue")
	return queued, func() { close(released) }
}

// Writes waiting together commit in one transaction; one failing with an
// error of its own fails alone while the group commits; one failing
// otherwise, or panicking, breaks the group, whose others then commit each
// alone, the one that panicked not run again.
func TestWriterGroupsWrites(t *testing.T) {
	for _, tc := range []struct {
		name   string
		bad    func(*otx) error
		err    string
		groups []int // writes per transaction committed after the held one
		panics []string
	}{
		{"all good", put("k2"), "", []int{4}, nil},
		{"an error of its own", func(t *otx) error { return errOwn }, "a business error", []int{3}, nil},
		{"another error", func(t *otx) error {
			t.writes++
			t.Bucket(bRecords).Put([]byte("half"), nil)
			return errors.New("disk on fire")
		},
			"commit: disk on fire", []int{1, 1, 1}, nil},
		{"a panic", func(t *otx) error { t.writes++; t.Bucket(bRecords).Put([]byte("half"), nil); panic("boom") },
			"a write panicked: boom", []int{1, 1, 1}, []string{"a write"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := seeded(t, 0)
			o := &owner{}
			w := newWriter(t, db, o)
			queued, release := hold(t, w)
			var wg sync.WaitGroup
			errs := make([]error, 4)
			for i := range errs {
				wg.Go(func() {
					if i == 2 {
						errs[i] = w.Update(tc.bad)
						return
					}
					errs[i] = w.Update(put(fmt.Sprint("k", i)))
				})
				within(t, queued, fmt.Sprintf("write %d joining the queue", i))
			}
			release()
			wg.Wait()
			for i, err := range errs {
				if i == 2 && tc.err != "" {
					assert.EqualError(t, err, tc.err)
					continue
				}
				assert.NoError(t, err, "write %d", i)
				assert.True(t, has(t, db, fmt.Sprint("k", i)), "write %d committed", i)
			}
			assert.False(t, has(t, db, "half"), "what the broken write did is rolled back")
			o.mu.Lock()
			assert.Equal(t, append([]int{0}, tc.groups...), o.groups, "the held write, then the groups")
			assert.Equal(t, tc.panics, o.panics)
			o.mu.Unlock()
			require.NoError(t, w.Update(put("after")), "the writer goes on")
		})
	}
}

// Prepare's work in several transactions comes before the group's writes,
// each transaction committed on its own.
func TestWriterPreparesInSeveralTransactions(t *testing.T) {
	db := seeded(t, 0)
	o := &owner{due: 3}
	w := newWriter(t, db, o)
	require.NoError(t, w.Update(put("k")))
	assert.Equal(t, []int{0, 0, 0, 1}, o.groups)
	assert.Equal(t, 4, o.committed)
	assert.Equal(t, 3, count(t, db, bLog))
	assert.Equal(t, uint64(1), db.Commits(), "a group counts one, however many transactions it took")
}

// A refused state fails every write unrun; a write alone runs between
// groups, and a panic in it fails it; after Close, writes fail with the
// owner's Closed, and Close is idempotent.
func TestWriterRefusesAloneAndCloses(t *testing.T) {
	db := seeded(t, 0)
	o := &owner{refused: errors.New("the state is incomplete")}
	w := NewWriter[*otx](db, o, slog.New(slog.DiscardHandler))
	assert.EqualError(t, w.Update(put("k")), "the state is incomplete")
	assert.False(t, has(t, db, "k"))
	o.refused = nil

	ran := false
	require.NoError(t, w.Alone(func() error {
		ran = true
		return db.Update(func(btx *bolt.Tx) error { return btx.Bucket(bRecords).Put([]byte("alone"), nil) })
	}))
	assert.True(t, ran)
	assert.True(t, has(t, db, "alone"))
	assert.EqualError(t, w.Alone(func() error { panic("bulk boom") }), "a bulk write panicked: bulk boom")
	require.NoError(t, w.Update(put("k")))

	w.Close()
	w.Close()
	assert.ErrorIs(t, w.Update(put("late")), errClosed)
	assert.ErrorIs(t, w.Alone(func() error { return nil }), errClosed)
}
