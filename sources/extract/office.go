package extract

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"
)

// Limits on what one container file may expand to: a zip bomb must not
// fill memory.
const (
	MaxPartSize      = 32 << 20        // one member of a zip container
	MaxContainerSize = 4 * MaxPartSize // all the members read from one container together
	MaxTextSize      = 16 << 20        // the text extracted from one file
)

// ErrTooMuchText is a document whose text passes MaxTextSize (or Limits.Text); errors.Is finds it in the error
// a smaller Limits.Text gives, which names that limit.
var ErrTooMuchText = errors.New("more than 16 MiB of text")

// textLimitError is a document whose text passes a limit other than MaxTextSize.
type textLimitError struct{ limit int64 }

func (e textLimitError) Error() string { return fmt.Sprintf("more than %d KiB of text", e.limit>>10) }

func (e textLimitError) Is(target error) bool { return target == ErrTooMuchText }

// ErrContainerShare is a zip container expanding past the budget it was given (Limits.Container) while that
// budget was below MaxContainerSize: the caller may try again with a larger one.
var ErrContainerShare = errors.New("the container expands past its share of the memory budget")

// zipText opens data as a zip container and reads it with read, within budget uncompressed bytes (at most
// MaxContainerSize): past a smaller budget the error is ErrContainerShare, and the caller may try again with a
// larger one. DOCX, PPTX and EPUB are zip files of XML and XHTML, read with archive/zip and encoding/xml.
func zipText(ctx context.Context, data []byte, lim Limits, read func(*container) (title, text string, err error)) (Document, error) {
	if err := ctx.Err(); err != nil {
		return Document{}, err
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return Document{}, errorf("not a valid zip container", err)
	}
	budget := lim.Container
	if budget <= 0 {
		budget = MaxContainerSize
	}
	c := &container{ctx: ctx, zr: zr, budget: min(budget, MaxContainerSize), text: lim.Text}
	title, text, err := read(c)
	return Document{Title: title, Text: text}, err
}

// container reads the members of one zip container within bounds: each member up to MaxPartSize, all the members
// read (a member named twice counts twice) up to budget, and nothing once ctx is done — so that a few kilobytes
// naming one member thousands of times cannot keep an update busy, or deaf to cancellation, for minutes.
type container struct {
	ctx    context.Context
	zr     *zip.Reader
	budget int64 // uncompressed bytes all the members read may add up to
	read   int64
	text   int64 // Limits.Text
}

func (c *container) part(name string) ([]byte, error) {
	if err := c.ctx.Err(); err != nil {
		return nil, err
	}
	f, err := c.zr.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	limit := min(int64(MaxPartSize), max(c.budget-c.read, 0))
	declared := limit
	if st, err := f.Stat(); err == nil {
		declared = st.Size()
	}
	data, err := readMember(f, declared, limit)
	c.read += int64(len(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > MaxPartSize {
		return nil, fmt.Errorf("%s: more than %d MiB uncompressed", name, MaxPartSize>>20)
	}
	if c.read > c.budget {
		if c.budget < MaxContainerSize {
			return nil, fmt.Errorf("%s: the container's members add up to more than %d MiB uncompressed: %w", name, c.budget>>20, ErrContainerShare)
		}
		return nil, fmt.Errorf("%s: the container's members add up to more than %d MiB uncompressed", name, c.budget>>20)
	}
	return data, nil
}

// readMember reads up to limit+1 bytes of r into one buffer of the size the member declares (bounded by the
// limit), rather than through the doublings of io.ReadAll: what reading a member allocates is what it holds, with
// or without the race detector. A member holding more than it declares grows the buffer, and still stops at the
// limit.
func readMember(r io.Reader, declared, limit int64) ([]byte, error) {
	data := make([]byte, 0, min(max(declared, 0), limit)+1)
	lr := &io.LimitedReader{R: r, N: limit + 1}
	for lr.N > 0 {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := lr.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return data, err
		}
	}
	return data, nil
}

// textBuilder collects extracted text up to limit bytes (zero: MaxTextSize).
type textBuilder struct {
	strings.Builder
	limit int64
	over  bool
}

func (b *textBuilder) line(s string) {
	if int64(b.Len()+len(s)) > textLimit(b.limit) {
		b.over = true
		return
	}
	b.WriteString(s)
	b.WriteByte('\n')
}

func (b *textBuilder) result() (string, error) {
	if b.over {
		if l := textLimit(b.limit); l != MaxTextSize {
			return "", textLimitError{l}
		}
		return "", ErrTooMuchText
	}
	return strings.TrimRight(b.String(), "\n") + "\n", nil
}

// textLimit is a Limits.Text: zero (or less) is MaxTextSize.
func textLimit(limit int64) int64 {
	if limit <= 0 {
		return MaxTextSize
	}
	return limit
}

// coreTitle reads dc:title from docProps/core.xml, if there is one.
func coreTitle(c *container) string {
	data, err := c.part("docProps/core.xml")
	if err != nil {
		return ""
	}
	var core struct {
		Title string `xml:"title"`
	}
	if xml.Unmarshal(data, &core) != nil {
		return ""
	}
	return strings.TrimSpace(core.Title)
}

// docxText reads word/document.xml: one line per paragraph, headings
// (styles Heading1…Heading6, Title) as Markdown headings, table cells
// separated by " | ".
func docxText(c *container) (title, text string, err error) {
	data, err := c.part("word/document.xml")
	if err != nil {
		return "", "", errorf("DOCX", err)
	}
	out := textBuilder{limit: c.text}
	var para strings.Builder
	level, inCell := 0, false
	dec := xml.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", "", errorf("DOCX word/document.xml", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "p":
				para.Reset()
				level = 0
			case "pStyle":
				v := xmlAttr(t, "val")
				switch {
				case strings.EqualFold(v, "Title"):
					level = 1
				case strings.HasPrefix(strings.ToLower(v), "heading"):
					if n, err := strconv.Atoi(v[len("heading"):]); err == nil && n >= 1 && n <= 6 {
						level = n
					}
				}
			case "tab":
				para.WriteByte('\t')
			case "br", "cr":
				para.WriteByte(' ')
			case "tc":
				inCell = true
			case "t":
				var s string
				if err := dec.DecodeElement(&s, &t); err != nil {
					return "", "", errorf("DOCX text", err)
				}
				para.WriteString(s)
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "p":
				s := strings.TrimSpace(para.String())
				if s == "" {
					continue
				}
				if level > 0 {
					if title == "" {
						title = s
					}
					out.line("")
					s = strings.Repeat("#", level) + " " + s
				}
				if inCell {
					s += " |"
				}
				out.line(s)
			case "tc":
				inCell = false
			case "tr":
				out.line("")
			}
		}
	}
	if t := coreTitle(c); t != "" {
		title = t
	}
	text, err = out.result()
	return title, text, err
}

func xmlAttr(t xml.StartElement, local string) string {
	for _, a := range t.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// pptxText reads the slides in order: "## Slide N" then one line per
// paragraph of text.
func pptxText(c *container) (title, text string, err error) {
	type slide struct {
		n    int
		name string
	}
	var slides []slide
	for _, f := range c.zr.File {
		rest, ok := strings.CutPrefix(f.Name, "ppt/slides/slide")
		if !ok || !strings.HasSuffix(rest, ".xml") {
			continue
		}
		if n, err := strconv.Atoi(strings.TrimSuffix(rest, ".xml")); err == nil {
			slides = append(slides, slide{n, f.Name})
		}
	}
	if len(slides) == 0 {
		return "", "", errors.New("PPTX: no slides")
	}
	slices.SortFunc(slides, func(a, b slide) int { return a.n - b.n })
	out := textBuilder{limit: c.text}
	for _, s := range slides {
		data, err := c.part(s.name)
		if err != nil {
			return "", "", errorf("PPTX", err)
		}
		out.line(fmt.Sprintf("## Slide %d", s.n))
		out.line("")
		var para strings.Builder
		dec := xml.NewDecoder(bytes.NewReader(data))
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				return "", "", errorf("PPTX "+s.name, err)
			}
			switch t := tok.(type) {
			case xml.StartElement:
				switch t.Name.Local {
				case "p":
					para.Reset()
				case "t":
					var v string
					if err := dec.DecodeElement(&v, &t); err != nil {
						return "", "", errorf("PPTX text", err)
					}
					para.WriteString(v)
				}
			case xml.EndElement:
				if t.Name.Local == "p" {
					if v := strings.TrimSpace(para.String()); v != "" {
						if title == "" {
							title = v
						}
						out.line(v)
					}
				}
			}
		}
		out.line("")
	}
	if t := coreTitle(c); t != "" {
		title = t
	}
	text, err = out.result()
	return title, text, err
}

// epubText reads the book's spine in order (container.xml → package
// document → XHTML chapters), each chapter rendered to Markdown.
func epubText(c *container) (title, text string, err error) {
	data, err := c.part("META-INF/container.xml")
	if err != nil {
		return "", "", errorf("EPUB", err)
	}
	var container struct {
		Rootfiles []struct {
			Path string `xml:"full-path,attr"`
		} `xml:"rootfiles>rootfile"`
	}
	if err := xml.Unmarshal(data, &container); err != nil || len(container.Rootfiles) == 0 {
		return "", "", errors.New("EPUB: container.xml names no package document")
	}
	opfPath := container.Rootfiles[0].Path
	data, err = c.part(opfPath)
	if err != nil {
		return "", "", errorf("EPUB", err)
	}
	var opf struct {
		Title string `xml:"metadata>title"`
		Items []struct {
			ID   string `xml:"id,attr"`
			Href string `xml:"href,attr"`
		} `xml:"manifest>item"`
		Spine []struct {
			IDRef string `xml:"idref,attr"`
		} `xml:"spine>itemref"`
	}
	if err := xml.Unmarshal(data, &opf); err != nil {
		return "", "", errorf("EPUB package document", err)
	}
	hrefs := map[string]string{}
	for _, it := range opf.Items {
		hrefs[it.ID] = it.Href
	}
	out := textBuilder{limit: c.text}
	for _, ref := range opf.Spine {
		href, ok := hrefs[ref.IDRef]
		if !ok {
			continue
		}
		if out.over {
			break // the text is over the limit already: the other chapters cannot change that
		}
		name := path.Join(path.Dir(opfPath), href)
		part, err := c.part(name)
		if err != nil {
			return "", "", errorf("EPUB", err)
		}
		res, err := Whole(DecodeText(part, "text/html"), nil)
		if err != nil {
			return "", "", errorf("EPUB "+name, err)
		}
		out.line(strings.TrimSpace(res.Text))
		out.line("")
	}
	text, err = out.result()
	return strings.TrimSpace(opf.Title), text, err
}

// xlsxText renders each sheet as "## Sheet name" and one line per row,
// cells separated by " | ". XLSX goes through excelize, which handles
// shared strings, number formats and dates.
func xlsxText(data []byte, lim Limits) (title, text string, err error) {
	f, err := excelize.OpenReader(bytes.NewReader(data), excelize.Options{
		UnzipSizeLimit:    MaxPartSize * 4,
		UnzipXMLSizeLimit: MaxPartSize,
	})
	if err != nil {
		return "", "", errorf("XLSX", err)
	}
	defer f.Close()
	out := textBuilder{limit: lim.Text}
	for _, sheet := range f.GetSheetList() {
		rows, err := f.Rows(sheet)
		if err != nil {
			return "", "", errorf("XLSX sheet "+sheet, err)
		}
		out.line("## " + sheet)
		out.line("")
		for rows.Next() && !out.over {
			cells, err := rows.Columns()
			if err != nil {
				rows.Close()
				return "", "", errorf("XLSX sheet "+sheet, err)
			}
			for len(cells) > 0 && strings.TrimSpace(cells[len(cells)-1]) == "" {
				cells = cells[:len(cells)-1]
			}
			if len(cells) > 0 {
				out.line(strings.Join(cells, " | "))
			}
		}
		if err := rows.Close(); err != nil {
			return "", "", errorf("XLSX sheet "+sheet, err)
		}
		out.line("")
	}
	if props, err := f.GetDocProps(); err == nil {
		title = strings.TrimSpace(props.Title)
	}
	text, err = out.result()
	return title, text, err
}

// notebookText renders a Jupyter notebook: Markdown cells as they are,
// code cells fenced with the kernel's language, outputs left out.
func notebookText(data []byte, lim Limits) (string, error) {
	var nb struct {
		Cells []struct {
			Type   string          `json:"cell_type"`
			Source json.RawMessage `json:"source"`
		} `json:"cells"`
		Metadata struct {
			Language struct {
				Name string `json:"name"`
			} `json:"language_info"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(data, &nb); err != nil {
		return "", errorf("notebook", err)
	}
	lang := nb.Metadata.Language.Name
	out := textBuilder{limit: lim.Text}
	for _, c := range nb.Cells {
		var src string
		var parts []string
		if json.Unmarshal(c.Source, &parts) == nil {
			src = strings.Join(parts, "")
		} else if err := json.Unmarshal(c.Source, &src); err != nil {
			return "", errorf("notebook cell", err)
		}
		src = strings.TrimRight(NormalizeNewlines(src), "\n")
		if strings.TrimSpace(src) == "" {
			continue
		}
		switch c.Type {
		case "code":
			out.line("```" + lang)
			out.line(src)
			out.line("```")
		default:
			out.line(src)
		}
		out.line("")
	}
	return out.result()
}

func errorf(what string, err error) error { return fmt.Errorf("%s: %w", what, err) }
