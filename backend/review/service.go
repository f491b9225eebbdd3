package review

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/goal"
)

// MaxCommentBytes bounds one comment: a review comment is a few sentences, maybe a snippet;
// 16 KiB is far above any, and the feedback they make goes into the agent's next prompt.
const MaxCommentBytes = 16 << 10

// Sides of a diff a comment's line is on.
const (
	SideNew = "new" // a line of the branch (added or unchanged)
	SideOld = "old" // a line the change removed, numbered as in the base
)

// ErrBusy refuses to send a review to work that is still going on; ErrNothingToSend, a send
// with no comment and no note; ErrSent, deleting a comment the agent has.
var (
	ErrBusy          = errors.New("still running")
	ErrNothingToSend = errors.New("nothing to send")
	ErrSent          = errors.New("already sent")
)

// ReopenError is a send the task or goal refused to re-open with (it was started again
// meanwhile, its branch could not catch up with its target…): nothing was sent.
type ReopenError struct {
	Ref string
	Err error
}

func (e *ReopenError) Error() string {
	return fmt.Sprintf("the review of %s was not sent (its comments stay unsent): %v", e.Ref, e.Err)
}

func (e *ReopenError) Unwrap() error { return e.Err }

// Comment is a person's comment on a change: on a line of a file, on a file (Line 0), or on
// the whole change (File "").
type Comment struct {
	ID        string     `json:"id"`
	Ref       string     `json:"ref"` // the subject's canonical ref
	File      string     `json:"file"`
	Line      int        `json:"line"`
	Side      string     `json:"side"` // SideNew or SideOld
	Body      string     `json:"body"`
	CreatedAt time.Time  `json:"createdAt"`
	SentAt    *time.Time `json:"sentAt,omitempty"` // when it went to the agent; nil while unsent
}

// NewComment is what a person writes: where, and what.
type NewComment struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Side string `json:"side"`
	Body string `json:"body"`
}

// Sent is what a send did: the work re-opened, and the feedback it was given.
type Sent struct {
	Reopened string `json:"reopened"`
	Feedback string `json:"feedback"`
}

// Repo keeps the comments (package store has it).
type Repo interface {
	AddReviewComment(ctx context.Context, c Comment) error
	ReviewComments(ctx context.Context, subject string, unsentOnly bool) ([]Comment, error)
	ReviewComment(ctx context.Context, id string) (Comment, error)
	DeleteReviewComment(ctx context.Context, id string) error
	MarkReviewCommentsSent(ctx context.Context, ids []string, at time.Time) error
}

// Reopener continues finished work with feedback: a fleet task (its fleet goes on), or a
// goal run on its own.
type Reopener interface {
	ReopenTask(ctx context.Context, fleetID, taskID, feedback string) error
	ReopenGoal(ctx context.Context, goalID, feedback string) error
}

// Service reads changes and keeps their comments until they are sent.
type Service struct {
	repo   Repo
	fleets Fleets
	goals  Goals
	reopen Reopener
	now    func() time.Time

	// sendMu makes a send's read, re-open and marking one step: two sends at once would give
	// the agent the same comments twice.
	sendMu sync.Mutex
}

// NewService returns the review service over the comments' store, the fleets and goals refs
// name, and what re-opens work (nil: sending is refused, saying so).
func NewService(repo Repo, fleets Fleets, goals Goals, reopen Reopener) *Service {
	return &Service{repo: repo, fleets: fleets, goals: goals, reopen: reopen, now: func() time.Time { return time.Now().UTC() }}
}

// Resolve finds the subject a ref names (see the package's Resolve).
func (s *Service) Resolve(ctx context.Context, ref string) (Subject, error) {
	return Resolve(ctx, s.fleets, s.goals, ref)
}

// Changes reads a page of the change a ref names.
func (s *Service) Changes(ctx context.Context, ref string, opts ChangesOptions) (ChangesPage, error) {
	subj, err := s.Resolve(ctx, ref)
	if err != nil {
		return ChangesPage{}, err
	}
	return Changes(ctx, subj, opts)
}

// Comments lists every comment on the change a ref names, sent or not, oldest first.
func (s *Service) Comments(ctx context.Context, ref string) ([]Comment, error) {
	subj, err := s.Resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	return s.repo.ReviewComments(ctx, subj.Ref, false)
}

// AddComment checks a comment and keeps it on the change a ref names until it is sent.
func (s *Service) AddComment(ctx context.Context, ref string, in NewComment) (Comment, error) {
	subj, err := s.Resolve(ctx, ref)
	if err != nil {
		return Comment{}, err
	}
	if err := checkComment(&in); err != nil {
		return Comment{}, err
	}
	if in.File != "" {
		files, err := filesOf(ctx, subj)
		if err != nil {
			return Comment{}, err
		}
		f, ok := findFile(files, in.File)
		if !ok {
			return Comment{}, &FieldError{"file", fmt.Sprintf("%q is not a file of %s's change; its files are %s", in.File, subj.Ref, fileNames(files))}
		}
		in.File = f.Path
	}
	c := Comment{ID: agent.NewID("rc-"), Ref: subj.Ref, File: in.File, Line: in.Line, Side: in.Side, Body: in.Body, CreatedAt: s.now()}
	if err := s.repo.AddReviewComment(ctx, c); err != nil {
		return Comment{}, err
	}
	return c, nil
}

// checkComment refuses a comment a person cannot have meant, naming the field, and fills in
// the side.
func checkComment(c *NewComment) error {
	if strings.TrimSpace(c.Body) == "" {
		return &FieldError{"body", "is empty: say what should change"}
	}
	if len(c.Body) > MaxCommentBytes {
		return &FieldError{"body", fmt.Sprintf("is %d bytes; at most %d (16 KiB): say what should change and point at files for the rest", len(c.Body), MaxCommentBytes)}
	}
	if err := goal.CheckText(c.Body, true); err != nil {
		return &FieldError{"body", err.Error()}
	}
	if err := goal.CheckText(c.File, false); err != nil {
		return &FieldError{"file", err.Error()}
	}
	switch {
	case c.Line < 0:
		return &FieldError{"line", fmt.Sprintf("is %d; give a line number from 1, or 0 for the whole file", c.Line)}
	case c.Line > 0 && c.File == "":
		return &FieldError{"line", "a comment on the whole change has no line: give its file too, or line 0"}
	}
	switch c.Side {
	case "":
		c.Side = SideNew
	case SideNew, SideOld:
	default:
		return &FieldError{"side", fmt.Sprintf("is %q; give %q (a line of the branch) or %q (a line the change removed)", c.Side, SideNew, SideOld)}
	}
	return nil
}

// filesOf lists a subject's changed files.
func filesOf(ctx context.Context, subj Subject) ([]FileChange, error) {
	sp, err := spanOf(ctx, subj)
	if err != nil {
		return nil, err
	}
	return listFiles(ctx, subj.Worktree.Repo, sp, nil)
}

// DeleteComment removes a comment not sent yet; a sent one stays, a record of what the agent
// was told.
func (s *Service) DeleteComment(ctx context.Context, id string) error {
	c, err := s.repo.ReviewComment(ctx, id)
	if err != nil {
		return err
	}
	if c.SentAt != nil {
		return fmt.Errorf("review comment %s went to the agent at %s; it stays, a record of what the agent was told: %w",
			id, c.SentAt.Format(time.RFC3339), ErrSent)
	}
	return s.repo.DeleteReviewComment(ctx, id)
}

// Send gives the agent of the work a ref names the unsent comments (and the person's note)
// as one feedback, re-opening the task or goal with it, and marks the comments sent. Work
// still running is refused (ErrBusy): steering reaches it.
func (s *Service) Send(ctx context.Context, ref, note string) (Sent, error) {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	subj, err := s.Resolve(ctx, ref)
	if err != nil {
		return Sent{}, err
	}
	note = strings.TrimSpace(note)
	if len(note) > MaxCommentBytes {
		return Sent{}, &FieldError{"note", fmt.Sprintf("is %d bytes; at most %d (16 KiB)", len(note), MaxCommentBytes)}
	}
	if err := goal.CheckText(note, true); err != nil {
		return Sent{}, &FieldError{"note", err.Error()}
	}
	if subj.Running() {
		return Sent{}, fmt.Errorf("%s is %s; steer it instead, or wait until it ends: %w", describe(subj), subj.Status, ErrBusy)
	}
	comments, err := s.repo.ReviewComments(ctx, subj.Ref, true)
	if err != nil {
		return Sent{}, err
	}
	if len(comments) == 0 && note == "" {
		return Sent{}, fmt.Errorf("there is nothing to send for %s: add a comment on its change, or a note: %w", subj.Ref, ErrNothingToSend)
	}
	var order []FileChange
	if files, err := filesOf(ctx, subj); err == nil {
		order = files
	} // Best effort: without the change's order, files go alphabetically.
	text := Feedback(subj, comments, note, order)
	if s.reopen == nil {
		return Sent{}, fmt.Errorf("re-opening work is not available here, so the review of %s was not sent; its comments stay", subj.Ref)
	}
	if subj.Kind == KindTask {
		err = s.reopen.ReopenTask(ctx, subj.FleetID, subj.TaskID, text)
	} else {
		err = s.reopen.ReopenGoal(ctx, subj.GoalID, text)
	}
	if err != nil {
		return Sent{}, &ReopenError{Ref: subj.Ref, Err: err}
	}
	ids := make([]string, len(comments))
	for i, c := range comments {
		ids[i] = c.ID
	}
	if err := s.repo.MarkReviewCommentsSent(context.WithoutCancel(ctx), ids, s.now()); err != nil {
		return Sent{}, fmt.Errorf("the agent of %s has the review, but its comments could not be marked sent (they show as unsent): %w", subj.Ref, err)
	}
	return Sent{Reopened: subj.Ref, Feedback: text}, nil
}

// describe names a subject in a sentence.
func describe(subj Subject) string {
	if subj.Kind == KindTask {
		return fmt.Sprintf("task %s of fleet %s", subj.TaskID, subj.FleetID)
	}
	return "goal " + subj.GoalID
}

// Feedback is the text the agent's next run starts with: the comments by file (in the
// change's order, then by line), each as "path:line: body", then those on the whole change,
// then the note.
func Feedback(subj Subject, comments []Comment, note string, files []FileChange) string {
	rank := map[string]int{}
	for i, f := range files {
		rank[f.Path] = i
	}
	byFile := map[string][]Comment{}
	var names []string
	var whole []Comment
	for _, c := range comments {
		if c.File == "" {
			whole = append(whole, c)
			continue
		}
		if _, ok := byFile[c.File]; !ok {
			names = append(names, c.File)
		}
		byFile[c.File] = append(byFile[c.File], c)
	}
	slices.SortStableFunc(names, func(a, b string) int {
		ra, oka := rank[a]
		rb, okb := rank[b]
		switch {
		case oka && okb:
			return ra - rb
		case oka != okb: // files still in the change first
			if oka {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	var b strings.Builder
	n := len(comments)
	fmt.Fprintf(&b, "A person reviewed your work on branch %s and sent it back", subj.Worktree.Branch)
	switch n {
	case 0:
		b.WriteString(".")
	case 1:
		b.WriteString(" with 1 comment.")
	default:
		fmt.Fprintf(&b, " with %d comments.", n)
	}
	b.WriteString(" Address each comment, then verify again.\n")
	for _, name := range names {
		cs := byFile[name]
		slices.SortStableFunc(cs, func(a, b Comment) int { return a.Line - b.Line })
		b.WriteString("\n")
		for _, c := range cs {
			where := c.File
			if c.Line > 0 {
				where += fmt.Sprintf(":%d", c.Line)
				if c.Side == SideOld {
					where += " (a line the change removed, numbered as before it)"
				}
			} else {
				where += " (the whole file)"
			}
			fmt.Fprintf(&b, "%s: %s\n", where, indent(c.Body))
		}
	}
	if len(whole) > 0 {
		b.WriteString("\nOn the whole change:\n")
		for _, c := range whole {
			fmt.Fprintf(&b, "- %s\n", indent(c.Body))
		}
	}
	if note != "" {
		fmt.Fprintf(&b, "\nNote: %s\n", indent(note))
	}
	return strings.TrimRight(b.String(), "\n")
}

// indent keeps a many-line body under its heading.
func indent(s string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n  ")
}
