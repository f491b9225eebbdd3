package llm

// KeepLastImages returns msgs with every image but the last n replaced by a short note. The
// stored conversation keeps them all; only the request is thinned.
func KeepLastImages(msgs []Message, n int) []Message {
	seen := 0
	out := make([]Message, len(msgs))
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		changed := false
		parts := make([]Part, 0, len(m.Parts))
		for j := len(m.Parts) - 1; j >= 0; j-- {
			p := m.Parts[j]
			switch {
			case p.Kind == PartImage:
				if seen++; seen > n {
					p, changed = Text("[an earlier screenshot was removed]"), true
				}
			case p.ToolResult != nil && len(p.ToolResult.Images) > 0:
				tr := *p.ToolResult
				var keep []Image
				for k := len(tr.Images) - 1; k >= 0; k-- {
					if seen++; seen <= n {
						keep = append([]Image{tr.Images[k]}, keep...)
					} else {
						changed = true
					}
				}
				if len(keep) != len(tr.Images) {
					tr.Images = keep
					p = ToolResultPart(tr)
				}
			}
			parts = append([]Part{p}, parts...)
		}
		if changed {
			m.Parts = parts
		}
		out[i] = m
	}
	return out
}
