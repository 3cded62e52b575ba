package lang

// The abstract syntax. Operands of operations, calls and struct literals
// are variables, never nested expressions: every temporary a program makes
// is named by a let, so the lowering's ownership rules are stated once per
// binding and a counterexample reads as a list of small steps.

// Program is a list of struct types and functions. Funcs[0] is main: no
// parameters, no result. A function calls only functions after it, so
// every program terminates.
type Program struct {
	Structs []StructDef
	Funcs   []*Func
}

// StructDef is a struct type whose fields are all tensors. A struct with
// no fields is zero-sized: its values are NULL.
type StructDef struct {
	Name   string
	Fields []string
}

// Type is a value's type: a tensor, or the struct Structs[Struct].
type Type struct {
	Tensor bool
	Struct int
}

// Func is a function or, with Method set, a method of the struct type of
// its first parameter (self).
type Func struct {
	Name   string
	Method bool
	Params []Param
	Result *Type // nil: no result (main)
	Body   []Stmt
}

// Param is a parameter: borrowed from the caller for the call.
type Param struct {
	Name string
	Type Type
}

// Stmt is a statement.
type Stmt interface{ stmt() }

// Let binds a new variable (shadowing any of the same name) to X's value.
type Let struct {
	Name string
	X    Expr
}

// Assign gives an existing variable X's value; the old value is dropped.
type Assign struct {
	Name string
	X    Expr
}

// If runs Then or Else by Cond.
type If struct {
	Cond       Cond
	Then, Else []Stmt
}

// Loop runs Body with its counter from 0 to N-1: `for i in 0..N`.
type Loop struct {
	Counter string
	N       int
	Body    []Stmt
}

// Block is a nested block: `{ ... }`, a scope of its own.
type Block struct{ Body []Stmt }

// Break and Continue leave the innermost loop's body.
type Break struct{}
type Continue struct{}

// Return leaves the function with Var's value (Var is "" in main).
type Return struct{ Var string }

func (*Let) stmt()      {}
func (*Assign) stmt()   {}
func (*If) stmt()       {}
func (*Loop) stmt()     {}
func (*Block) stmt()    {}
func (*Break) stmt()    {}
func (*Continue) stmt() {}
func (*Return) stmt()   {}

// Cond is a condition: Counter == K for a loop counter in scope, or, with
// no counter, the constant K != 0.
type Cond struct {
	Counter string
	K       int
}

// Expr is an expression.
type Expr interface{ expr() }

// Var reads a variable.
type Var struct{ Name string }

// Op is a tensor operation: `zeros(Size)` with no arguments makes a
// tensor of Size bytes; with arguments, `add(a, b, ...)` reads them and
// makes a tensor the size of the first. The result is computed in an arena
// slot of the function's frame and then kept as a heap tensor.
type Op struct {
	Size uint64
	Args []string
}

// StructLit makes a struct of type Structs[Type] holding Fields.
type StructLit struct {
	Type   int
	Fields []string
}

// Field reads field Index of struct variable Var.
type Field struct {
	Var   string
	Index int
}

// Call calls Funcs[Func] with Args (borrowed); for a method, Args[0] is
// the receiver.
type Call struct {
	Func int
	Args []string
}

// IfExpr is `if Cond { Then; ThenVal } else { Else; ElseVal }`: the value
// of the branch taken escapes its block.
type IfExpr struct {
	Cond             Cond
	Then, Else       []Stmt
	ThenVal, ElseVal string
}

// BlockExpr is `{ Body; Val }`: Val's value escapes the block.
type BlockExpr struct {
	Body []Stmt
	Val  string
}

func (*Var) expr()       {}
func (*Op) expr()        {}
func (*StructLit) expr() {}
func (*Field) expr()     {}
func (*Call) expr()      {}
func (*IfExpr) expr()    {}
func (*BlockExpr) expr() {}

// structSize is the bytes of a struct with n fields: 0, NULL, for none.
func structSize(n int) uint64 { return 8 * uint64(n) }

// inspect visits every statement of body and of the bodies nested in it,
// in order, calling stmt (if not nil) on each, and expr (if not nil) on
// the value of each let and assignment; the bodies of if and block
// expressions are visited where their value is.
func inspect(body []Stmt, stmt func(Stmt), expr func(Expr)) {
	for _, s := range body {
		if stmt != nil {
			stmt(s)
		}
		switch s := s.(type) {
		case *Let:
			inspectExpr(s.X, stmt, expr)
		case *Assign:
			inspectExpr(s.X, stmt, expr)
		case *If:
			inspect(s.Then, stmt, expr)
			inspect(s.Else, stmt, expr)
		case *Loop:
			inspect(s.Body, stmt, expr)
		case *Block:
			inspect(s.Body, stmt, expr)
		}
	}
}

func inspectExpr(x Expr, stmt func(Stmt), expr func(Expr)) {
	if expr != nil {
		expr(x)
	}
	switch x := x.(type) {
	case *IfExpr:
		inspect(x.Then, stmt, expr)
		inspect(x.Else, stmt, expr)
	case *BlockExpr:
		inspect(x.Body, stmt, expr)
	}
}
