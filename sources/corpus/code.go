package corpus

import (
	"go/ast"
	"go/parser"
	"go/token"
)

// chunkGo chunks Go source at top-level declarations, each starting at its
// doc comment, so a chunk holds whole declarations with their
// documentation (a declaration longer than a chunk is split by the size
// limits). Generated files (the "Code generated … DO NOT EDIT." line) are
// refused with errGenerated.
func chunkGo(name, text string) (title string, chunks []chunk, err error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, text, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return "", nil, err
	}
	if ast.IsGenerated(f) {
		return "", nil, errGenerated
	}
	starts := map[int]bool{} // 0-based lines where a declaration, with its doc comment, begins
	for _, d := range f.Decls {
		pos := d.Pos()
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Doc != nil {
				pos = d.Doc.Pos()
			}
		case *ast.GenDecl:
			if d.Doc != nil {
				pos = d.Doc.Pos()
			}
		}
		starts[fset.Position(pos).Line-1] = true
	}
	title = name + " (package " + f.Name.Name + ")"
	return title, chunkLines(splitLines(text), func(_ []string, i int) bool { return starts[i] }), nil
}
