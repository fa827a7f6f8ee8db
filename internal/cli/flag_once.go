package cli

import (
	"errors"
	"flag"
)

// repeatableFunc defines a flag that may be given more than once (--case, --metadata), each
// value passed to set as fs.Func passes it; its usage says so.
func repeatableFunc(fs *flag.FlagSet, name, usage string, set func(string) error) {
	fs.Var(repeatable(set), name, usage+" (repeatable)")
}

// repeatable is the value of a flag that may be given more than once: onlyOnce leaves it be.
type repeatable func(string) error

func (set repeatable) Set(s string) error { return set(s) }
func (repeatable) String() string         { return "" }

// onceValue refuses a second value: the flag package lets the last of two settle a flag
// without a word, so `--tool-error a --tool-error b` wrote the edit b, and a second --dataset
// read another dataset than the first one named.
type onceValue struct {
	flag.Value
	set bool
}

func (o *onceValue) Set(s string) error {
	if o.set {
		return errGivenTwice
	}
	o.set = true
	return o.Value.Set(s)
}

// IsBoolFlag keeps a bool flag one that takes no value.
func (o *onceValue) IsBoolFlag() bool {
	b, ok := o.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

var errGivenTwice = errors.New("given twice: give it once")

// onlyOnce makes each flag of fs not defined by repeatableFunc refuse a second value until restore is
// called, which puts the flags' own values back (the usage prints their types and defaults).
func onlyOnce(fs *flag.FlagSet) (restore func()) {
	own := map[*flag.Flag]flag.Value{}
	fs.VisitAll(func(f *flag.Flag) {
		if _, ok := f.Value.(repeatable); !ok {
			own[f] = f.Value
			f.Value = &onceValue{Value: f.Value}
		}
	})
	return func() {
		for f, v := range own {
			f.Value = v
		}
	}
}
