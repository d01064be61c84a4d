package runtime

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/hostfns"
	"github.com/packs-run/packs/packs"
)

// SecretSource reads secrets' values for the pipeline (internal/secrets'
// store). found is false for a name that has no value.
type SecretSource interface {
	Lookup(name string) (value []byte, found bool, err error)
}

// ErrSecretMissing: the grant holds a secret that has no value in the
// store. Nothing ran. *SecretMissingError names it.
var ErrSecretMissing = errors.New("runtime: granted secret has no value")

// SecretMissingError names the secret a call needs and the store lacks.
type SecretMissingError struct {
	Pack, Name string
}

func (e *SecretMissingError) Error() string {
	return fmt.Sprintf("runtime: pack %s is granted the secret %s, which is not set", e.Pack, e.Name)
}

func (e *SecretMissingError) Unwrap() error { return ErrSecretMissing }

// secrets reads the values of the secrets g holds, and only those.
func (p *Pipeline) secrets(g capability.Grant) (*hostfns.Secrets, error) {
	names := g.SecretNames()
	if len(names) == 0 {
		return nil, nil
	}
	if p.cfg.Secrets == nil {
		return nil, &SecretMissingError{Pack: g.Pack(), Name: names[0]}
	}
	vals := make(map[string][]byte, len(names))
	for _, n := range names {
		v, found, err := p.cfg.Secrets.Lookup(n)
		if err != nil {
			return nil, fmt.Errorf("runtime: reading secret %s: %w", n, err)
		}
		if !found || len(v) == 0 {
			return nil, &SecretMissingError{Pack: g.Pack(), Name: n}
		}
		vals[n] = v
	}
	return hostfns.NewSecrets(vals), nil
}

// mask removes every granted secret's value from what a call hands back:
// its output, its logs and its error, before the audit row is written and
// the result is shown to anyone (the model included). An output that is no
// longer JSON once masked becomes a JSON string of the masked text.
func mask(sec *hostfns.Secrets, out json.RawMessage, res Result, err error) (json.RawMessage, Result, error) {
	if sec == nil {
		return out, res, err
	}
	if sec.Holds(out) {
		out = sec.Mask(out)
		if !json.Valid(out) {
			out, _ = json.Marshal(string(out))
		}
		res.Output = out
	}
	res.Stderr = sec.Mask(res.Stderr)
	var te *ToolError
	if errors.As(err, &te) {
		te.Message, te.Stderr = sec.MaskString(te.Message), sec.Mask(te.Stderr)
	}
	if err != nil && sec.Holds([]byte(err.Error())) {
		// Keep what the error means (StatusOf), drop what it said.
		var kept []error
		for _, s := range []error{capability.ErrDenied, packs.ErrModified, packs.ErrInvalidInput, ErrInputLimit, ErrTimeout, ErrMemoryLimit, ErrOutputLimit, ErrToolFailed, ErrTrap} {
			if errors.Is(err, s) {
				kept = append(kept, s)
			}
		}
		err = &stopError{msg: sec.MaskString(err.Error()), errs: kept}
	}
	return out, res, err
}
