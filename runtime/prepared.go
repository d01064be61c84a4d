package runtime

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sync"
)

// Prepared modules on disk. Preparing a module (moving its Extism imports,
// renaming its initializer, adding the stack and table limits) reads and
// rewrites every function body: about 25 ms for a 3.5 MB Go plugin, paid by
// every new process before wazero finds the module's machine code in its
// own cache. The prepared bytes depend only on the module's bytes, its ABI
// and this program, so they are kept in the cache directory beside wazero's
// compiled code, named by all three:
//
//	<cache>/prepared/<sha256 of the module>-<abi>-<program>.wasm
//
// where <program> identifies the running executable (its path, size,
// modification time and inode): a rebuilt packs, whose preparation may
// differ, never reads what an older one wrote. The file starts with the
// length and CRC-32C of the prepared bytes, checked on every read, so a torn
// or truncated file (they are written without fsync: a cache) is prepared
// again, never used. (A checksum, not a hash: the bytes are hashed by wazero
// anyway, and the check is against accidents, not an attacker.) The directory is trusted as wazero's compiled code
// beside it is: whoever can write machine code there can write this too.

const preparedDir = "prepared"

// programID names the running executable for prepared-module file names;
// "" when it cannot be identified (prepared modules are then not kept).
var programID = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	s := fmt.Sprintf("%s\x00%d\x00%d\x00%v", exe, fi.Size(), fi.ModTime().UnixNano(), fi.Sys())
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:12])
})

// preparedPath is where the prepared form of key's module is kept; "" when
// the Runtime has no disk cache or the program is not identified.
func (r *Runtime) preparedPath(key moduleKey) string {
	id := programID()
	if r.cacheDir == "" || id == "" {
		return ""
	}
	return filepath.Join(r.cacheDir, preparedDir, fmt.Sprintf("%s-%s-%s.wasm", key.sha, key.abi, id))
}

// readPrepared returns the prepared bytes kept for key, when a whole,
// unaltered copy is there.
func (r *Runtime) readPrepared(key moduleKey) ([]byte, bool) {
	p := r.preparedPath(key)
	if p == "" {
		return nil, false
	}
	data, err := os.ReadFile(p)
	if err != nil || len(data) < preparedHeader {
		return nil, false
	}
	body := data[preparedHeader:]
	if binary.LittleEndian.Uint64(data) != uint64(len(body)) || binary.LittleEndian.Uint32(data[8:]) != crc32.Checksum(body, castagnoli) {
		return nil, false
	}
	return body, true
}

// preparedHeader is the length (8 bytes) and CRC-32C (4 bytes) before the
// prepared bytes, both little-endian.
const preparedHeader = 12

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// writePrepared keeps wasm, the prepared form of key's module. A failure
// only means the next process prepares it again: it is logged, not
// returned.
func (r *Runtime) writePrepared(key moduleKey, wasm []byte) {
	p := r.preparedPath(key)
	if p == "" {
		return
	}
	err := os.MkdirAll(filepath.Dir(p), 0o700)
	var f *os.File
	if err == nil {
		f, err = os.CreateTemp(filepath.Dir(p), ".prepared-*")
	}
	if err == nil {
		head := binary.LittleEndian.AppendUint64(nil, uint64(len(wasm)))
		head = binary.LittleEndian.AppendUint32(head, crc32.Checksum(wasm, castagnoli))
		_, err = f.Write(head)
		if err == nil {
			_, err = f.Write(wasm)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(f.Name(), p)
		}
		if err != nil {
			os.Remove(f.Name())
		}
	}
	if err != nil {
		r.log.Warn("runtime: cannot keep a prepared module: the next process prepares it again", "path", p, "err", err)
	}
}
