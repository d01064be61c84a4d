// Command probe is the attack guest of the hostfns tests: an Extism plugin
// (go-pdk) that takes one JSON command, tries what it says through the
// host's doors and reports what happened. Build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -tags net,exec -o probe.wasm
//
// Without the net and exec tags it imports neither group's host functions.
// A denial of a host function traps the call, so the host sees those as the
// call's error; filesystem and environment refusals come back as reports.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"

	pdk "github.com/extism/go-pdk"
)

type command struct {
	Op     string   `json:"op"`
	Path   string   `json:"path,omitempty"`
	Target string   `json:"target,omitempty"`
	Data   string   `json:"data,omitempty"`
	URL    string   `json:"url,omitempty"`
	Method string   `json:"method,omitempty"`
	Name   string   `json:"name,omitempty"`
	Argv   []string `json:"argv,omitempty"`
	MB     int      `json:"mb,omitempty"`
	Stdout bool     `json:"stdout,omitempty"`
	Count  int      `json:"count,omitempty"`
}

type report struct {
	OK      bool            `json:"ok"`
	Error   string          `json:"error,omitempty"`
	Data    string          `json:"data,omitempty"`
	Entries []string        `json:"entries,omitempty"`
	Status  int             `json:"status,omitempty"`
	Headers json.RawMessage `json:"headers,omitempty"`
	Found   bool            `json:"found,omitempty"`
	Exec    json.RawMessage `json:"exec,omitempty"`
}

// extra holds the ops of the network and exec builds (tags net, exec):
// a module imports a group's host functions only when built with its tag.
var extra = map[string]func(command) report{}

func main() {}

//go:wasmimport packs:host/progress progress
func hostProgress(request uint64)

//go:wasmimport packs:host/ask ask
func hostAsk(request uint64) uint64

//go:wasmexport probe
func probe() int32 {
	var c command
	if err := pdk.InputJSON(&c); err != nil {
		pdk.SetError(err)
		return 1
	}
	r := run(c)
	if err := pdk.OutputJSON(r); err != nil {
		pdk.SetError(err)
		return 1
	}
	return 0
}

func run(c command) report {
	switch c.Op {
	case "read":
		b, err := os.ReadFile(c.Path)
		return result(string(b), err)
	case "write":
		return result("", os.WriteFile(c.Path, []byte(c.Data), 0o644))
	case "append":
		f, err := os.OpenFile(c.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err == nil {
			_, err = f.WriteString(c.Data)
			err = errors.Join(err, f.Close())
		}
		return result("", err)
	case "list":
		es, err := os.ReadDir(c.Path)
		r := result("", err)
		for _, e := range es {
			r.Entries = append(r.Entries, e.Name())
		}
		return r
	case "stat":
		fi, err := os.Stat(c.Path)
		if err != nil {
			return result("", err)
		}
		return result(fi.Mode().String(), nil)
	case "mkdir":
		return result("", os.Mkdir(c.Path, 0o755))
	case "remove":
		return result("", os.Remove(c.Path))
	case "rename":
		return result("", os.Rename(c.Path, c.Target))
	case "symlink":
		return result("", os.Symlink(c.Target, c.Path))
	case "cwd":
		d, err := os.Getwd()
		return result(d, err)
	case "getenv":
		v, ok := os.LookupEnv(c.Name)
		r := result(v, nil)
		r.Found = ok
		return r
	case "config":
		v, ok := pdk.GetConfig(c.Name)
		r := result(v, nil)
		r.Found = ok
		return r
	case "log":
		for range max(c.Count, 1) {
			pdk.Log(pdk.LogInfo, c.Data)
		}
		return result("", nil)
	case "progress":
		// Each element of argv is one report, as JSON.
		for _, req := range c.Argv {
			mem := pdk.AllocateString(req)
			hostProgress(mem.Offset())
		}
		return result("", nil)
	case "ask":
		// Each element of argv is one question, as JSON; each answer
		// comes back as one entry.
		var answers []string
		for _, req := range c.Argv {
			mem := pdk.AllocateString(req)
			out := pdk.FindMemory(hostAsk(mem.Offset()))
			answers = append(answers, string(out.ReadBytes()))
		}
		return report{OK: true, Entries: answers}
	case "loop":
		for {
		}
	case "alloc":
		b := make([]byte, c.MB<<20)
		for i := range b {
			b[i] = byte(i)
		}
		return result(string(b[:1]), nil)
	case "spew":
		b := bytes.Repeat([]byte("x"), c.MB<<20)
		if c.Stdout {
			_, err := os.Stdout.Write(b)
			return result("", err)
		}
		return result(string(b), nil)
	}
	if f, ok := extra[c.Op]; ok {
		return f(c)
	}
	return report{Error: "unknown op " + c.Op}
}

func result(data string, err error) report {
	if err != nil {
		return report{Error: err.Error()}
	}
	return report{OK: true, Data: data}
}
