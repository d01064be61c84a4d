package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/packs-run/packs/packs"
)

// watcher tells a session's client when the file behind a resource it
// subscribed to changes. It watches the folder that holds each file (an
// editor that saves by renaming a new file over the old one replaces the
// file, which a watch on the file itself would lose) and reports writes,
// creations, renames and removals of the file. The operating system's
// watch starts with the first subscription and ends with the session.
type watcher struct {
	notify func(uri string)
	log    *slog.Logger

	mu    sync.Mutex
	fw    *fsnotify.Watcher
	done  bool
	dirs  map[string]int             // watched folders: how many watched files each holds
	files map[string]map[string]bool // a file's real path -> the URIs subscribed to it
	uris  map[string]string          // a subscribed URI -> its file's real path
}

func newWatcher(log *slog.Logger, notify func(uri string)) *watcher {
	return &watcher{notify: notify, log: log, dirs: map[string]int{}, files: map[string]map[string]bool{}, uris: map[string]string{}}
}

// errWatcherClosed: the session ended.
var errWatcherClosed = errors.New("mcpserver: the session's file watcher is closed")

// add subscribes uri to changes of the file at path (a real path: no
// symlink left in it).
func (w *watcher) add(uri, path string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return errWatcherClosed
	}
	if old, ok := w.uris[uri]; ok {
		if old == path {
			return nil
		}
		w.dropLocked(uri)
	}
	if w.fw == nil {
		fw, err := fsnotify.NewWatcher()
		if err != nil {
			return fmt.Errorf("mcpserver: watching files: %w", err)
		}
		w.fw = fw
		go w.run(fw)
	}
	dir := filepath.Dir(path)
	if w.dirs[dir] == 0 {
		if err := w.fw.Add(dir); err != nil {
			return fmt.Errorf("mcpserver: watching %s: %w", dir, err)
		}
	}
	w.dirs[dir]++
	if w.files[path] == nil {
		w.files[path] = map[string]bool{}
	}
	w.files[path][uri] = true
	w.uris[uri] = path
	return nil
}

// remove ends the subscription of uri, if any.
func (w *watcher) remove(uri string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.dropLocked(uri)
}

func (w *watcher) dropLocked(uri string) {
	path, ok := w.uris[uri]
	if !ok {
		return
	}
	delete(w.uris, uri)
	delete(w.files[path], uri)
	if len(w.files[path]) == 0 {
		delete(w.files, path)
	}
	dir := filepath.Dir(path)
	if w.dirs[dir]--; w.dirs[dir] <= 0 {
		delete(w.dirs, dir)
		if w.fw != nil {
			_ = w.fw.Remove(dir) // the folder may be gone already
		}
	}
}

// close ends every watch; later subscriptions fail.
func (w *watcher) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = true
	if w.fw != nil {
		w.fw.Close()
		w.fw = nil
	}
}

// run reports changes until fw is closed.
func (w *watcher) run(fw *fsnotify.Watcher) {
	const changes = fsnotify.Write | fsnotify.Create | fsnotify.Rename | fsnotify.Remove
	for {
		select {
		case ev, ok := <-fw.Events:
			if !ok {
				return
			}
			if ev.Op&changes == 0 {
				continue
			}
			w.mu.Lock()
			var uris []string
			for uri := range w.files[ev.Name] {
				uris = append(uris, uri)
			}
			w.mu.Unlock()
			for _, uri := range uris {
				w.notify(uri)
			}
		case err, ok := <-fw.Errors:
			if !ok {
				return
			}
			w.log.Warn("mcpserver: watching subscribed files", "err", err)
		}
	}
}

// subscribe starts notifications/resources/updated for a resource: any
// URI that resources/read accepts (pack://, a declared URI or a declared
// template's match) whose file exists in the pack. A subscription shows
// the client when the file changes, never what it holds, so it does not
// go through the gate; reading the new content does.
func (c *conn) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	c.mu.Lock()
	sess := c.chat
	c.mu.Unlock()
	uri := req.Params.URI
	target, err := c.resolve(sess, uri)
	if err != nil {
		return err
	}
	p, ok := sess.Pack(target.pack)
	if !ok {
		return mcp.ResourceNotFoundError(uri)
	}
	path, err := packs.SafeJoin(p.Dir, target.file)
	if err != nil {
		if errors.Is(err, packs.ErrPathEscape) {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("mcpserver: %s: %v", trimForError(uri), err)}
		}
		return mcp.ResourceNotFoundError(uri)
	}
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return mcp.ResourceNotFoundError(uri)
	}
	c.endWatchWith(req.Session)
	return c.watch.add(uri, path)
}

// unsubscribe ends a subscription.
func (c *conn) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	c.watch.remove(req.Params.URI)
	return nil
}

// endWatchWith closes the watcher when ss ends (once per conn: a conn
// serves one session).
func (c *conn) endWatchWith(ss *mcp.ServerSession) {
	c.watchOnce.Do(func() {
		go func() {
			_ = ss.Wait()
			c.watch.close()
		}()
	})
}

// resourceUpdated tells the session's subscribed client that uri changed.
func (c *conn) resourceUpdated(uri string) {
	if err := c.srv.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
		c.s.log.Warn("mcpserver: notifying a resource update", "uri", uri, "err", err)
	}
}
