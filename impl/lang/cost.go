package lang

// MaxCost bounds the statements a run of a well-formed program executes
// (Cost), so that no program, generated or shrunk or written by hand,
// takes long: calls inside nested loops multiply.
const MaxCost = 5000

// Cost is an upper bound of the statements a run of p executes: every
// loop runs N times, both branches of an if count, a call costs its
// callee's body. p must call only functions after the caller (Check).
func Cost(p *Program) int {
	memo := make([]int, len(p.Funcs))
	for i := len(p.Funcs) - 1; i >= 0; i-- {
		memo[i] = bodyCost(p.Funcs[i].Body, memo)
	}
	if len(memo) == 0 {
		return 0
	}
	return memo[0]
}

func bodyCost(b []Stmt, memo []int) int {
	n := 0
	for _, s := range b {
		n++
		switch s := s.(type) {
		case *Let:
			n += exprCost(s.X, memo)
		case *Assign:
			n += exprCost(s.X, memo)
		case *If:
			n += bodyCost(s.Then, memo) + bodyCost(s.Else, memo)
		case *Loop:
			n += max(s.N, 0) * bodyCost(s.Body, memo)
		case *Block:
			n += bodyCost(s.Body, memo)
		}
		n = min(n, MaxCost+1) // no overflow, however deep
	}
	return n
}

func exprCost(x Expr, memo []int) int {
	switch x := x.(type) {
	case *Call:
		if x.Func >= 0 && x.Func < len(memo) {
			return memo[x.Func]
		}
	case *IfExpr:
		return bodyCost(x.Then, memo) + bodyCost(x.Else, memo)
	case *BlockExpr:
		return bodyCost(x.Body, memo)
	}
	return 0
}

// cheapen brings a generated program within MaxCost: first every loop
// runs once; if that is not enough, the program is main alone, empty.
func cheapen(p *Program) {
	if Cost(p) <= MaxCost {
		return
	}
	var once func([]Stmt)
	once = func(b []Stmt) {
		for _, s := range b {
			switch s := s.(type) {
			case *Loop:
				s.N = min(s.N, 1)
				once(s.Body)
			case *If:
				once(s.Then)
				once(s.Else)
			case *Block:
				once(s.Body)
			}
		}
	}
	for _, f := range p.Funcs {
		once(f.Body)
	}
	if Cost(p) > MaxCost {
		p.Funcs = []*Func{{Name: "main"}}
	}
}
