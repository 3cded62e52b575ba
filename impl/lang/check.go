package lang

import (
	"fmt"

	"github.com/tlcheck/tlcheck/impl"
)

// Limits of a well-formed program, which keep every run short: a loop runs
// at most MaxLoop times and a program has at most MaxFuncs functions. A
// tensor has at most MaxTensor bytes, the most the runtime's arena holds
// (its address space): a larger one is input the runtime cannot run, not
// a bug of it, so it is refused here, where the source names it.
const (
	MaxLoop   = 4
	MaxFuncs  = 8
	MaxTensor = impl.MaxArenaSize
)

// Check reports the first thing that makes p ill-formed, naming the
// function and the statement: an unknown variable, function, struct or
// field, a type mismatch, a break outside a loop, a function with a result
// that can end without returning, a call to a function not after the
// caller (which keeps every run finite).
func Check(p *Program) error {
	if len(p.Funcs) == 0 {
		return fmt.Errorf("lang: the program has no main function")
	}
	if len(p.Funcs) > MaxFuncs {
		return fmt.Errorf("lang: %d functions: at most %d", len(p.Funcs), MaxFuncs)
	}
	if m := p.Funcs[0]; len(m.Params) > 0 || m.Result != nil || m.Method {
		return fmt.Errorf("lang: main (%s) must take no parameters and return nothing", m.Name)
	}
	for i, f := range p.Funcs {
		c := &checker{p: p, fi: i, fn: f}
		if err := c.fn_(); err != nil {
			return fmt.Errorf("lang: fn %s: %w", f.Name, err)
		}
	}
	if c := Cost(p); c > MaxCost {
		return fmt.Errorf("lang: a run may execute %d statements: at most %d", c, MaxCost)
	}
	return nil
}

type checker struct {
	p      *Program
	fi     int
	fn     *Func
	scopes []map[string]Type
	params map[string]bool
	loops  []string
	inExpr int // inside an if or block expression: no break, continue or return
}

func (c *checker) fn_() error {
	f := c.fn
	c.scopes = []map[string]Type{{}}
	c.params = map[string]bool{}
	if f.Method && (len(f.Params) == 0 || f.Params[0].Type.Tensor) {
		return fmt.Errorf("a method's first parameter must be a struct")
	}
	for _, q := range f.Params {
		if err := c.typ(q.Type); err != nil {
			return err
		}
		c.scopes[0][q.Name] = q.Type
		c.params[q.Name] = true
	}
	if f.Result != nil {
		if err := c.typ(*f.Result); err != nil {
			return err
		}
		if len(f.Body) == 0 {
			return fmt.Errorf("the body must end with return")
		}
		if _, ok := f.Body[len(f.Body)-1].(*Return); !ok {
			return fmt.Errorf("the body must end with return")
		}
	}
	return c.body(f.Body)
}

func (c *checker) typ(t Type) error {
	if !t.Tensor && (t.Struct < 0 || t.Struct >= len(c.p.Structs)) {
		return fmt.Errorf("unknown struct %d", t.Struct)
	}
	return nil
}

func (c *checker) lookup(name string) (Type, error) {
	for i := len(c.scopes) - 1; i >= 0; i-- {
		if t, ok := c.scopes[i][name]; ok {
			return t, nil
		}
	}
	return Type{}, fmt.Errorf("variable %s is not in scope", name)
}

func (c *checker) tensor(name string) error {
	t, err := c.lookup(name)
	if err == nil && !t.Tensor {
		err = fmt.Errorf("%s is not a tensor", name)
	}
	return err
}

func (c *checker) block(body []Stmt) error {
	c.scopes = append(c.scopes, map[string]Type{})
	err := c.body(body)
	c.scopes = c.scopes[:len(c.scopes)-1]
	return err
}

func (c *checker) body(body []Stmt) error {
	for i, s := range body {
		if err := c.stmt(s); err != nil {
			return fmt.Errorf("statement %d: %w", i, err)
		}
	}
	return nil
}

func (c *checker) cond(k Cond) error {
	if k.Counter == "" {
		return nil
	}
	for _, l := range c.loops {
		if l == k.Counter {
			return nil
		}
	}
	return fmt.Errorf("loop counter %s is not in scope", k.Counter)
}

func (c *checker) stmt(s Stmt) error {
	switch s := s.(type) {
	case *Let:
		t, err := c.expr(s.X)
		if err != nil {
			return err
		}
		c.scopes[len(c.scopes)-1][s.Name] = t
		if len(c.scopes) == 1 {
			delete(c.params, s.Name) // shadowed: the name is a local now
		}
	case *Assign:
		t, err := c.expr(s.X)
		if err != nil {
			return err
		}
		old, err := c.lookup(s.Name)
		if err != nil {
			return err
		}
		if _, local := c.local(s.Name); !local && c.params[s.Name] {
			return fmt.Errorf("parameter %s is borrowed: it cannot be assigned", s.Name)
		}
		if old != t {
			return fmt.Errorf("%s = a value of another type", s.Name)
		}
	case *If:
		if err := c.cond(s.Cond); err != nil {
			return err
		}
		if err := c.block(s.Then); err != nil {
			return err
		}
		return c.block(s.Else)
	case *Loop:
		if s.N < 0 || s.N > MaxLoop {
			return fmt.Errorf("a loop of %d iterations: want 0 to %d", s.N, MaxLoop)
		}
		c.loops = append(c.loops, s.Counter)
		err := c.block(s.Body)
		c.loops = c.loops[:len(c.loops)-1]
		return err
	case *Block:
		return c.block(s.Body)
	case *Break, *Continue:
		if len(c.loops) == 0 || c.inExpr > 0 {
			return fmt.Errorf("break or continue outside a loop")
		}
	case *Return:
		if c.inExpr > 0 {
			return fmt.Errorf("return inside an if or block expression")
		}
		if c.fn.Result == nil {
			if s.Var != "" {
				return fmt.Errorf("return of a value from a function without a result")
			}
			return nil
		}
		t, err := c.lookup(s.Var)
		if err != nil {
			return err
		}
		if t != *c.fn.Result {
			return fmt.Errorf("return of %s: not the function's result type", s.Var)
		}
	default:
		return fmt.Errorf("unknown statement %T", s)
	}
	return nil
}

// local reports whether name is bound outside the parameters' scope.
func (c *checker) local(name string) (Type, bool) {
	for i := len(c.scopes) - 1; i >= 1; i-- {
		if t, ok := c.scopes[i][name]; ok {
			return t, true
		}
	}
	return Type{}, false
}

func (c *checker) expr(x Expr) (Type, error) {
	switch x := x.(type) {
	case *Var:
		return c.lookup(x.Name)
	case *Op:
		if len(x.Args) == 0 && x.Size == 0 {
			return Type{}, fmt.Errorf("zeros(0): a tensor has at least one byte")
		}
		if x.Size > MaxTensor {
			return Type{}, tooBig(x.Size)
		}
		for _, a := range x.Args {
			if err := c.tensor(a); err != nil {
				return Type{}, err
			}
		}
		return Type{Tensor: true}, nil
	case *StructLit:
		if err := c.typ(Type{Struct: x.Type}); err != nil {
			return Type{}, err
		}
		if len(x.Fields) != len(c.p.Structs[x.Type].Fields) {
			return Type{}, fmt.Errorf("%s has %d fields, the literal %d", c.p.Structs[x.Type].Name, len(c.p.Structs[x.Type].Fields), len(x.Fields))
		}
		for _, a := range x.Fields {
			if err := c.tensor(a); err != nil {
				return Type{}, err
			}
		}
		return Type{Struct: x.Type}, nil
	case *Field:
		t, err := c.lookup(x.Var)
		if err != nil {
			return Type{}, err
		}
		if t.Tensor || x.Index < 0 || x.Index >= len(c.p.Structs[t.Struct].Fields) {
			return Type{}, fmt.Errorf("%s has no field %d", x.Var, x.Index)
		}
		return Type{Tensor: true}, nil
	case *Call:
		if x.Func <= c.fi || x.Func >= len(c.p.Funcs) {
			return Type{}, fmt.Errorf("a call of function %d: a function calls only those after it", x.Func)
		}
		f := c.p.Funcs[x.Func]
		if f.Result == nil {
			return Type{}, fmt.Errorf("a call of %s, which returns nothing", f.Name)
		}
		if len(x.Args) != len(f.Params) {
			return Type{}, fmt.Errorf("%s takes %d arguments, given %d", f.Name, len(f.Params), len(x.Args))
		}
		for i, a := range x.Args {
			t, err := c.lookup(a)
			if err != nil {
				return Type{}, err
			}
			if t != f.Params[i].Type {
				return Type{}, fmt.Errorf("argument %d of %s: wrong type", i, f.Name)
			}
		}
		return *f.Result, nil
	case *IfExpr:
		if err := c.cond(x.Cond); err != nil {
			return Type{}, err
		}
		t1, err := c.valueBlock(x.Then, x.ThenVal)
		if err != nil {
			return Type{}, err
		}
		t2, err := c.valueBlock(x.Else, x.ElseVal)
		if err != nil {
			return Type{}, err
		}
		if t1 != t2 {
			return Type{}, fmt.Errorf("the branches of an if expression differ in type")
		}
		return t1, nil
	case *BlockExpr:
		return c.valueBlock(x.Body, x.Val)
	}
	return Type{}, fmt.Errorf("unknown expression %T", x)
}

func (c *checker) valueBlock(body []Stmt, val string) (Type, error) {
	c.inExpr++
	c.scopes = append(c.scopes, map[string]Type{})
	defer func() { c.scopes = c.scopes[:len(c.scopes)-1]; c.inExpr-- }()
	if err := c.body(body); err != nil {
		return Type{}, err
	}
	return c.lookup(val)
}

// tooBig is the error of a zeros(n) larger than MaxTensor.
func tooBig(n uint64) error {
	return fmt.Errorf("zeros(%d): larger than %d bytes, the most the runtime's arena holds", n, uint64(MaxTensor))
}
