package hostfns

import (
	"context"
	"errors"
	"fmt"

	extism "github.com/extism/go-sdk"

	"github.com/packs-run/packs/capability"
)

// Host module names of packs host ABI v1 (docs/abi.md).
const (
	NetworkNamespace = "packs:host/network" // http_request, http_status_code, http_headers, http_truncated
	ExecNamespace    = "packs:host/exec"    // exec
	LogNamespace     = "packs:host/log"     // log_trace ... log_error, get_log_level
	ConfigNamespace  = "packs:host/config"  // config_get
)

// ExtismFunctions returns the Extism host functions for the granted
// capability groups only: network adds http_request, http_status_code and
// http_headers (NetworkNamespace); terminal_exec adds exec (ExecNamespace);
// secrets_access adds secret_get (SecretsNamespace), which Require serves
// only to a grant that reveals; the log functions (LogNamespace),
// config_get (ConfigNamespace), progress (ProgressNamespace) and ask
// (AskNamespace, which checks ask_person at each question) and the kernel
// forwarders (KernelNamespace) are always there. Other names in groups add nothing. Per-call state comes from
// the context (WithCall), so one set serves every instance; the set owns one
// http.Client that keeps no idle connections.
func ExtismFunctions(groups []capability.Name) []extism.HostFunction {
	fns := []extism.HostFunction{
		fn(LogNamespace, "log_trace", logAt(levelTrace), ptr),
		fn(LogNamespace, "log_debug", logAt(levelDebug), ptr),
		fn(LogNamespace, "log_info", logAt(levelInfo), ptr),
		fn(LogNamespace, "log_warn", logAt(levelWarn), ptr),
		fn(LogNamespace, "log_error", logAt(levelError), ptr),
		fn(LogNamespace, "get_log_level", getLogLevel, nil, extism.ValueTypeI32),
		fn(ConfigNamespace, "config_get", configGet, ptr, extism.ValueTypePTR),
		fn(ProgressNamespace, "progress", progressHost, ptr),
		fn(AskNamespace, "ask", askHost, ptr, extism.ValueTypePTR),
	}
	fns = append(fns, kernelFunctions()...)
	seen := map[capability.Name]bool{}
	for _, g := range groups {
		if seen[g] {
			continue
		}
		seen[g] = true
		switch g {
		case capability.Network:
			n := newNetwork()
			fns = append(fns,
				fn(NetworkNamespace, "http_request", n.request, []extism.ValueType{extism.ValueTypePTR, extism.ValueTypePTR}, extism.ValueTypePTR),
				fn(NetworkNamespace, "http_status_code", n.statusCode, nil, extism.ValueTypeI32),
				fn(NetworkNamespace, "http_headers", n.headers, nil, extism.ValueTypePTR),
				fn(NetworkNamespace, "http_truncated", n.truncated, nil, extism.ValueTypeI32),
			)
		case capability.TerminalExec:
			fns = append(fns, fn(ExecNamespace, "exec", execHost, ptr, extism.ValueTypePTR))
		case capability.SecretsAccess:
			fns = append(fns, fn(SecretsNamespace, "secret_get", secretGet, ptr, extism.ValueTypePTR))
		}
	}
	return fns
}

var ptr = []extism.ValueType{extism.ValueTypePTR}

func fn(namespace, name string, cb extism.HostFunctionStackCallback, params []extism.ValueType, results ...extism.ValueType) extism.HostFunction {
	f := extism.NewHostFunctionWithStack(name, cb, params, results)
	f.SetNamespace(namespace)
	return f
}

// Require checks, before anything is instantiated, that c's grant holds
// every group the module imports (from ImportedGroups). Each missing group is
// recorded as a denial and the error wraps capability.ErrDenied and names
// the capability: without it the module would have an import nothing
// provides.
func Require(c *Call, groups []capability.Name) error {
	if err := c.check(); err != nil {
		return err
	}
	var errs []error
	for _, g := range groups {
		if g == capability.SecretsAccess {
			// secret_get serves only a grant that reveals a secret.
			if !c.Grant.Reveals() {
				errs = append(errs, c.decide(c.Grant.SecretReveal(SecretsNamespace)))
			}
			continue
		}
		if c.Grant.Has(g) {
			continue
		}
		var d capability.Decision
		switch g {
		case capability.Network:
			d = c.Grant.Host(NetworkNamespace) // not held: the grant's reason why
		case capability.TerminalExec:
			d = c.Grant.Command(ExecNamespace)
		default:
			return fmt.Errorf("hostfns: no host functions for capability %q", g)
		}
		errs = append(errs, c.decide(d))
	}
	return errors.Join(errs...)
}

// Host functions report failure by panicking with an error: wazero turns
// the panic into the error of the guest call (Plugin.Call returns it, and
// errors.Is still sees capability.ErrDenied and our sentinels). The guest
// stops; the host does not.

// mustCall returns the Call in ctx or traps.
func mustCall(ctx context.Context) *Call {
	c, ok := CallFrom(ctx)
	if !ok {
		panic(ErrNoCall)
	}
	if err := c.check(); err != nil {
		panic(err)
	}
	return c
}

// mustRead copies the Extism memory block at offset and frees it, or traps.
func mustRead(p *extism.CurrentPlugin, offset uint64) string {
	b := mustReadBytes(p, offset)
	return string(b)
}

func mustReadBytes(p *extism.CurrentPlugin, offset uint64) []byte {
	b, err := p.ReadBytes(offset)
	if err != nil {
		panic(fmt.Errorf("%w: cannot read guest memory block at %d: %v", ErrInvalidRequest, offset, err))
	}
	if err := p.Free(offset); err != nil {
		panic(fmt.Errorf("hostfns: freeing guest memory block at %d: %w", offset, err))
	}
	return b
}

// mustWrite copies b into a new Extism memory block, or traps.
func mustWrite(p *extism.CurrentPlugin, b []byte) uint64 {
	off, err := p.WriteBytes(b)
	if err != nil {
		panic(fmt.Errorf("hostfns: writing %d bytes to guest memory: %w", len(b), err))
	}
	return off
}

func isDenied(err error) bool { return errors.Is(err, capability.ErrDenied) }
