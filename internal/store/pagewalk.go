package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/bits"
	"os"
)

// The first pass of Receive (see snapshot.go): the page structure of
// an uploaded bbolt file, walked with ReadAt before bbolt maps anything.

// The bbolt file format (version 2), as bbolt writes it on little-endian
// machines: a page is a 16-byte header (id u64, flags u16, count u16,
// overflow u32) and its body.
const (
	pageHeader     = 16
	elemSize       = 16 // a branch element (pos, ksize u32, pgid u64) or a leaf element (flags, pos, ksize, vsize u32)
	branchFlag     = 0x01
	leafFlag       = 0x02
	metaFlag       = 0x04
	freelistFlag   = 0x10
	bucketLeafFlag = 0x01
	boltMagic      = 0xED0CDAED
	boltVersion    = 2
	noFreelist     = ^uint64(0)
	metaSize       = 64 // magic, version, page size, flags (u32), root, sequence, freelist, pgid, txid, checksum (u64)
)

var le = binary.LittleEndian

type boltMeta struct {
	pageSize                  uint32
	root, freelist, hwm, txid uint64
}

// pageChecker walks the pages of a file with ReadAt.
type pageChecker struct {
	f    *os.File
	size int64
	psz  uint64
	hwm  uint64
	seen []uint64 // bit set of pages reached
}

// checkPages checks the page structure of the file at path (see
// snapshot.go) and extends the file to what bbolt will map.
func checkPages(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	c := &pageChecker{f: f, size: fi.Size()}
	m0, err := c.meta(0, 0)
	if err != nil {
		return err
	}
	c.psz = uint64(m0.pageSize)
	m1, err := c.meta(1, int64(c.psz))
	if err != nil {
		return err
	}
	if m0.pageSize != m1.pageSize {
		return invalid("its two meta pages disagree on the page size")
	}
	m := m0 // the one bbolt reads: the later transaction
	if m1.txid > m0.txid {
		m = m1
	}
	c.hwm = m.hwm
	switch {
	case c.hwm < 3 || c.hwm > uint64(c.size)/c.psz:
		return invalid("it is cut short or damaged: its meta page counts %d pages of %d bytes, the file has %d bytes", c.hwm, c.psz, c.size)
	case m.root < 2 || m.root >= c.hwm:
		return invalid("its root page %d is out of range", m.root)
	case m.freelist != noFreelist && (m.freelist < 2 || m.freelist >= c.hwm):
		return invalid("its freelist page %d is out of range", m.freelist)
	}
	c.seen = make([]uint64, (c.hwm+63)/64)
	c.mark(0, 0)
	c.mark(1, 0)
	if m.freelist != noFreelist {
		if err := c.freelist(m.freelist); err != nil {
			return err
		}
	}
	if _, err := c.tree(m.root, 0, "", nil, nil); err != nil {
		return err
	}
	// Whatever bbolt maps beyond the end of the file would fault when read:
	// make the file as long as the mapping (the gap reads as zeros).
	if want := mapSize(c.size, int64(c.psz)); want > c.size {
		if err := f.Truncate(want); err != nil {
			return err
		}
	}
	return nil
}

// mapSize is the size bbolt maps a file of size bytes to (DB.mmapSize).
func mapSize(size, psz int64) int64 {
	sz := size
	if sz <= 1<<30 {
		sz = max(1<<15, int64(1)<<bits.Len64(uint64(sz-1)))
	} else if r := sz % (1 << 30); r > 0 {
		sz += 1<<30 - r
	}
	if r := sz % psz; r > 0 {
		sz += psz - r
	}
	return sz
}

func (c *pageChecker) meta(id uint64, off int64) (boltMeta, error) {
	var buf [pageHeader + metaSize]byte
	if _, err := c.f.ReadAt(buf[:], off); err != nil {
		return boltMeta{}, invalid("it is not a state file (too short)")
	}
	m := buf[pageHeader:]
	switch {
	case le.Uint32(m[0:]) != boltMagic:
		return boltMeta{}, invalid("it is not a state file (meta page %d has no bbolt magic number)", id)
	case le.Uint32(m[4:]) != boltVersion:
		return boltMeta{}, invalid("meta page %d has bbolt file version %d, not %d", id, le.Uint32(m[4:]), boltVersion)
	}
	h := fnv.New64a()
	h.Write(m[:metaSize-8])
	if h.Sum64() != le.Uint64(m[metaSize-8:]) {
		return boltMeta{}, invalid("meta page %d is damaged (bad checksum)", id)
	}
	if le.Uint64(buf[0:]) != id || le.Uint16(buf[8:]) != metaFlag {
		return boltMeta{}, invalid("meta page %d has a damaged header", id)
	}
	bm := boltMeta{pageSize: le.Uint32(m[8:]), root: le.Uint64(m[16:]), freelist: le.Uint64(m[32:]), hwm: le.Uint64(m[40:]), txid: le.Uint64(m[48:])}
	if bm.pageSize < 1024 || bm.pageSize > 1<<16 || bm.pageSize&(bm.pageSize-1) != 0 {
		return boltMeta{}, invalid("meta page %d has a page size of %d bytes", id, bm.pageSize)
	}
	return bm, nil
}

// mark records that page id and its overflow pages are reached, once.
func (c *pageChecker) mark(id uint64, overflow uint32) bool {
	for p := id; p <= id+uint64(overflow); p++ {
		if c.seen[p/64]&(1<<(p%64)) != 0 {
			return false
		}
		c.seen[p/64] |= 1 << (p % 64)
	}
	return true
}

// page reads page id with its overflow pages, after checking its header:
// its type must be one of the flags in types.
func (c *pageChecker) page(id uint64, types uint16, what string) ([]byte, error) {
	var hdr [pageHeader]byte
	if _, err := c.f.ReadAt(hdr[:], int64(id*c.psz)); err != nil {
		return nil, invalid("%s: page %d cannot be read", what, id)
	}
	overflow := le.Uint32(hdr[12:])
	switch {
	case le.Uint64(hdr[0:]) != id:
		return nil, invalid("%s: page %d calls itself page %d", what, id, le.Uint64(hdr[0:]))
	case !oneOf(le.Uint16(hdr[8:]), types):
		return nil, invalid("%s: page %d has type %#x", what, id, le.Uint16(hdr[8:]))
	case id+uint64(overflow) >= c.hwm:
		return nil, invalid("%s: page %d runs past the last page", what, id)
	case !c.mark(id, overflow):
		return nil, invalid("%s: page %d is reached twice", what, id)
	}
	buf := make([]byte, (uint64(overflow)+1)*c.psz)
	if _, err := c.f.ReadAt(buf, int64(id*c.psz)); err != nil {
		return nil, invalid("%s: page %d cannot be read", what, id)
	}
	return buf, nil
}

// oneOf reports whether flags is exactly one of the flags in types.
func oneOf(flags, types uint16) bool {
	return flags != 0 && flags&(flags-1) == 0 && flags&types != 0
}

func (c *pageChecker) freelist(id uint64) error {
	p, err := c.page(id, freelistFlag, "freelist")
	if err != nil {
		return err
	}
	start, count := uint64(pageHeader), uint64(le.Uint16(p[10:]))
	if count == 0xFFFF {
		count, start = le.Uint64(p[pageHeader:]), pageHeader+8
	}
	if count > (uint64(len(p))-start)/8 {
		return invalid("freelist: page %d lists more pages than it holds", id)
	}
	for i := uint64(0); i < count; i++ {
		if free := le.Uint64(p[start+8*i:]); free < 2 || free >= c.hwm {
			return invalid("freelist: page %d frees page %d, out of range", id, free)
		}
	}
	return nil
}

// tree checks the B+tree at page id: depth 0 is the root bucket, which holds
// the buckets; depth 1 a bucket, which holds records. Keys are in order as
// bbolt's check wants them (strictly increasing in a page; in a subtree, at
// least min, below max when max is set): its freelist rebuild gives up on a
// bad order in a goroutine that then walks on, past the file's closing.
// tree returns the greatest key of the subtree.
func (c *pageChecker) tree(id uint64, depth int, bucket string, min, max []byte) ([]byte, error) {
	what := "the root"
	if depth > 0 {
		what = fmt.Sprintf("bucket %q", bucket)
	}
	p, err := c.page(id, branchFlag|leafFlag, what)
	if err != nil {
		return nil, err
	}
	if le.Uint16(p[8:]) == leafFlag {
		return c.leaf(p, depth, what, id, min, max)
	}
	count := uint64(le.Uint16(p[10:]))
	if count == 0 {
		return nil, invalid("%s: branch page %d is empty", what, id)
	}
	if pageHeader+count*elemSize > uint64(len(p)) {
		return nil, invalid("%s: page %d counts more elements than it holds", what, id)
	}
	keys := make([][]byte, count)
	for i := range count {
		at := pageHeader + i*elemSize
		pos, ksize := uint64(le.Uint32(p[at:])), uint64(le.Uint32(p[at+4:]))
		if at+pos+ksize > uint64(len(p)) {
			return nil, invalid("%s: page %d has a key outside the page", what, id)
		}
		keys[i] = p[at+pos : at+pos+ksize]
	}
	running := min
	for i := range count {
		if err := inOrder(keys[i], running, max, i == 0); err != nil {
			return nil, invalid("%s: page %d: %v", what, id, err)
		}
		child := le.Uint64(p[pageHeader+i*elemSize+8:])
		if child < 2 || child >= c.hwm {
			return nil, invalid("%s: page %d points at page %d, out of range", what, id, child)
		}
		next := max
		if i+1 < count {
			next = keys[i+1]
		}
		if running, err = c.tree(child, depth, bucket, keys[i], next); err != nil {
			return nil, err
		}
	}
	return running, nil
}

// inOrder checks a key against the one before it (or the least the subtree
// allows, for the first) and the bound of its subtree, as bbolt's check does.
func inOrder(k, prev, max []byte, first bool) error {
	switch {
	case prev != nil && first && bytes.Compare(prev, k) > 0:
		return fmt.Errorf("key %s is below its parent's", ShowKey(k))
	case prev != nil && !first && bytes.Compare(prev, k) >= 0:
		return fmt.Errorf("key %s is out of order", ShowKey(k))
	case max != nil && bytes.Compare(k, max) >= 0:
		return fmt.Errorf("key %s is beyond its parent's next", ShowKey(k))
	}
	return nil
}

// leaf checks the elements of a leaf page (p holds the page from its header
// on; an inline bucket's page sits in its value) and returns its last key.
func (c *pageChecker) leaf(p []byte, depth int, what string, id uint64, min, max []byte) ([]byte, error) {
	count := uint64(le.Uint16(p[10:]))
	if pageHeader+count*elemSize > uint64(len(p)) {
		return nil, invalid("%s: page %d counts more elements than it holds", what, id)
	}
	running := min
	for i := range count {
		at := pageHeader + i*elemSize
		flags, pos := le.Uint32(p[at:]), uint64(le.Uint32(p[at+4:]))
		ksize, vsize := uint64(le.Uint32(p[at+8:])), uint64(le.Uint32(p[at+12:]))
		if at+pos+ksize+vsize > uint64(len(p)) {
			return nil, invalid("%s: page %d has a record outside the page", what, id)
		}
		k := p[at+pos : at+pos+ksize]
		v := p[at+pos+ksize : at+pos+ksize+vsize]
		if err := inOrder(k, running, max, i == 0); err != nil {
			return nil, invalid("%s: page %d: %v", what, id, err)
		}
		running = k
		switch {
		case depth == 0 && flags != bucketLeafFlag:
			return nil, invalid("the root holds %q, which is not a bucket", k)
		case depth > 0 && flags != 0:
			return nil, invalid("%s holds a nested bucket or a bad record flag", what)
		case depth > 0:
			continue
		}
		name := string(k)
		if uint64(len(v)) < 16 {
			return nil, invalid("bucket %q has a damaged header", name)
		}
		if root := le.Uint64(v); root != 0 {
			if root < 2 || root >= c.hwm {
				return nil, invalid("bucket %q starts at page %d, out of range", name, root)
			}
			if _, err := c.tree(root, 1, name, nil, nil); err != nil {
				return nil, err
			}
			continue
		}
		inline := v[16:]
		if len(inline) < pageHeader || le.Uint16(inline[8:]) != leafFlag {
			return nil, invalid("bucket %q has a damaged inline page", name)
		}
		if _, err := c.leaf(inline, 1, fmt.Sprintf("bucket %q", name), id, nil, nil); err != nil {
			return nil, err
		}
	}
	return running, nil
}
