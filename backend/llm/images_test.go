package llm_test

import (
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/llm"
)

func TestKeepLastImagesThinsOnlyTheRequest(t *testing.T) {
	img := func(b byte) llm.Image { return llm.Image{MediaType: "image/jpeg", Data: []byte{b}} }
	conv := []llm.Message{
		llm.UserText("look", img(1)),
		llm.ToolMessage(llm.ToolResult{CallID: "a", Text: "shot", Images: []llm.Image{img(2), img(3)}}),
		llm.ToolMessage(llm.ToolResult{CallID: "b", Text: "shot", Images: []llm.Image{img(4)}}),
		llm.UserText("and this", img(5)),
	}
	got := llm.KeepLastImages(conv, 3)
	var kept []byte
	for _, m := range got {
		for _, p := range m.Parts {
			if p.Kind == llm.PartImage {
				kept = append(kept, p.Image.Data...)
			}
			if p.ToolResult != nil {
				for _, i := range p.ToolResult.Images {
					kept = append(kept, i.Data...)
				}
			}
		}
	}
	if string(kept) != string([]byte{3, 4, 5}) {
		t.Fatalf("kept images %v, want the last three [3 4 5]", kept)
	}
	if !strings.Contains(got[0].Text(), "earlier screenshot was removed") {
		t.Fatalf("the dropped image left no note: %+v", got[0])
	}
	if len(conv[1].ToolResults()[0].Images) != 2 || conv[0].Parts[len(conv[0].Parts)-1].Kind != llm.PartImage {
		t.Fatal("the stored conversation was changed")
	}
}
