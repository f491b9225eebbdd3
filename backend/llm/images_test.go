package llm_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
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

// randomConversation is n messages of every kind, a third of them holding pictures (image
// parts, tool results with none, one or several), for comparing LatestImages with
// KeepLastImages.
func randomConversation(rng *rand.Rand, n int) []llm.Message {
	img := func() llm.Image { return llm.Image{MediaType: "image/png", Data: []byte{byte(rng.IntN(256))}} }
	var out []llm.Message
	for i := range n {
		switch rng.IntN(6) {
		case 0:
			var imgs []llm.Image
			for range rng.IntN(3) {
				imgs = append(imgs, img())
			}
			out = append(out, llm.UserText(fmt.Sprint("user ", i), imgs...))
		case 1:
			var results []llm.ToolResult
			for k := range 1 + rng.IntN(2) {
				r := llm.ToolResult{CallID: fmt.Sprint("c", i, k), Name: "t", Text: "out"}
				for range rng.IntN(4) {
					r.Images = append(r.Images, img())
				}
				results = append(results, r)
			}
			out = append(out, llm.ToolMessage(results...))
		case 2:
			out = append(out, llm.UserMessage(llm.ImagePart(img()), llm.Text("caption"), llm.ImagePart(img())))
		default:
			out = append(out, llm.AssistantText(fmt.Sprint("assistant ", i)))
		}
	}
	return out
}

// LatestImages, fed a conversation a few messages at a time, must hold exactly what
// KeepLastImages made of the whole conversation so far (one full pass, as it was), and name every earlier message it
// changed: the agent sends the one and keeps token counts by the other.
func TestLatestImagesMatchesKeepLastImages(t *testing.T) {
	t.Parallel()
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 7))
		conv := randomConversation(rng, 1+rng.IntN(60))
		stored, _ := json.Marshal(conv)
		keep := rng.IntN(5)
		l := llm.LatestImages{N: keep}
		var prev []llm.Message
		for at := 0; at < len(conv); {
			next := min(len(conv), at+1+rng.IntN(4))
			rewritten := l.Append(conv[at:next]...)
			at = next
			want := keepLastImagesReference(conv[:at], keep)
			wantJSON, _ := json.Marshal(want)
			for name, got := range map[string][]llm.Message{"LatestImages": l.Messages(), "KeepLastImages": llm.KeepLastImages(conv[:at], keep)} {
				gotJSON, _ := json.Marshal(got)
				if !reflect.DeepEqual(got, want) || string(gotJSON) != string(wantJSON) {
					t.Fatalf("%s, seed %d, keep %d, %d messages:\n got %s\nwant %s", name, seed, keep, at, gotJSON, wantJSON)
				}
			}
			got := l.Messages()
			for i := range prev {
				if !reflect.DeepEqual(prev[i], got[i]) && !slices.Contains(rewritten, i) {
					t.Fatalf("seed %d: message %d changed but Append did not say so (it said %v)", seed, i, rewritten)
				}
			}
			prev = slices.Clone(got)
		}
		if after, _ := json.Marshal(conv); string(after) != string(stored) {
			t.Fatalf("seed %d: thinning changed the stored conversation", seed)
		}
	}
}

// A turn that brings no picture costs no pass over the earlier ones, and the spare room
// lets the agent add its per-turn message without copying the conversation.
func TestLatestImagesAppendWithoutPicturesRewritesNothing(t *testing.T) {
	t.Parallel()
	l := llm.LatestImages{N: 1}
	l.Append(llm.UserText("look", llm.Image{MediaType: "image/png", Data: []byte{1}}))
	if r := l.Append(llm.AssistantText("ok")); r != nil {
		t.Fatalf("a message without pictures rewrote %v", r)
	}
	if r := l.Append(llm.UserText("again", llm.Image{MediaType: "image/png", Data: []byte{2}})); !slices.Equal(r, []int{0}) {
		t.Fatalf("a new picture rewrote %v, want [0]: the first picture is no longer the last", r)
	}
	msgs := l.Messages()
	if cap(msgs) == len(msgs) {
		t.Fatal("no room after the conversation: appending the per-turn message copies it every turn")
	}
}

// keepLastImagesReference is KeepLastImages as it was before it was split for LatestImages,
// one full pass per request: both must go on sending exactly what it sent.
func keepLastImagesReference(msgs []llm.Message, n int) []llm.Message {
	seen := 0
	out := make([]llm.Message, len(msgs))
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		changed := false
		parts := make([]llm.Part, 0, len(m.Parts))
		for j := len(m.Parts) - 1; j >= 0; j-- {
			p := m.Parts[j]
			switch {
			case p.Kind == llm.PartImage:
				if seen++; seen > n {
					p, changed = llm.Text("[an earlier screenshot was removed]"), true
				}
			case p.ToolResult != nil && len(p.ToolResult.Images) > 0:
				tr := *p.ToolResult
				var keep []llm.Image
				for k := len(tr.Images) - 1; k >= 0; k-- {
					if seen++; seen <= n {
						keep = append([]llm.Image{tr.Images[k]}, keep...)
					} else {
						changed = true
					}
				}
				if len(keep) != len(tr.Images) {
					tr.Images = keep
					p = llm.ToolResultPart(tr)
				}
			}
			parts = append([]llm.Part{p}, parts...)
		}
		if changed {
			m.Parts = parts
		}
		out[i] = m
	}
	return out
}
