package tools

import "math"

type mathArgs struct {
	A *float64 `json:"a"`
	B *float64 `json:"b"`
}

// MathResult is the result of every test-math tool.
type MathResult struct {
	Result float64 `json:"result"`
}

func arith(op func(a, b float64) (float64, error)) Tool {
	return wrap(func(m mathArgs) (MathResult, error) {
		if m.A == nil || m.B == nil {
			return MathResult{}, invalid("pass both numbers, a and b")
		}
		r, err := op(*m.A, *m.B)
		if err != nil {
			return MathResult{}, err
		}
		if math.IsInf(r, 0) || math.IsNaN(r) {
			return MathResult{}, invalid("the result is not a finite number")
		}
		return MathResult{Result: r}, nil
	})
}

// The test-math tools.
var (
	Add      = arith(func(a, b float64) (float64, error) { return a + b, nil })
	Subtract = arith(func(a, b float64) (float64, error) { return a - b, nil })
	Multiply = arith(func(a, b float64) (float64, error) { return a * b, nil })
	Divide   = arith(func(a, b float64) (float64, error) {
		if b == 0 {
			return 0, invalid("division by zero: b must not be 0")
		}
		return a / b, nil
	})
)
