package catalog

import (
	"context"
	"fmt"
	"strings"

	"github.com/clusterspace/clusterspace/backend/tools"
)

// The skill tools' names.
const (
	ToolListSkills = "list_skills"
	ToolLoadSkill  = "load_skill"
)

type listSkillsParams struct {
	Domain string `json:"domain,omitempty" desc:"Only the skills of this domain (as list_skills shows them); empty for all."`
}

type loadSkillParams struct {
	ID string `json:"id" desc:"The skill's id, as list_skills shows it."`
}

// Tools are list_skills and load_skill: the agent pulls a how-to in when it needs one, so the
// skills it never needs cost no tokens. Both only read the catalog.
func (c *Catalog) Tools() []tools.Tool {
	return []tools.Tool{
		tools.New(ToolListSkills, "List the skills you can load: how-to texts the person keeps for their projects (deploys, reviews, conventions). Each line: id, name, domain, what it covers.",
			tools.ReadOnly, func(ctx context.Context, _ tools.Call, p listSkillsParams) (tools.Result, error) {
				var b strings.Builder
				for _, s := range c.Skills() {
					if p.Domain != "" && !strings.EqualFold(s.Domain, p.Domain) {
						continue
					}
					fmt.Fprintf(&b, "- %s: %s", s.ID, s.Name)
					if s.Domain != "" {
						fmt.Fprintf(&b, " [%s]", s.Domain)
					}
					if s.Description != "" {
						b.WriteString(" — " + s.Description)
					}
					b.WriteString("\n")
				}
				if b.Len() == 0 {
					if p.Domain != "" {
						return tools.Result{Text: fmt.Sprintf("No skill has the domain %q; call list_skills without a domain to see them all.", p.Domain)}, nil
					}
					return tools.Result{Text: "There are no skills."}, nil
				}
				return tools.Result{Text: b.String() + "Call load_skill with an id to read one."}, nil
			}),
		tools.New(ToolLoadSkill, "Read a skill's full how-to text (see list_skills for the ids), then follow it.",
			tools.ReadOnly, func(ctx context.Context, _ tools.Call, p loadSkillParams) (tools.Result, error) {
				id := strings.TrimSpace(p.ID)
				s, ok := c.Skill(id)
				if !ok {
					ids := make([]string, 0)
					for _, s := range c.Skills() {
						ids = append(ids, s.ID)
					}
					return tools.Errorf("There is no skill %q; the skills are: %s.", id, strings.Join(ids, ", ")), nil
				}
				text := "# Skill: " + s.Name + "\n"
				if len(s.Prerequisites) > 0 {
					text += "Prerequisites: " + strings.Join(s.Prerequisites, ", ") + "\n"
				}
				return tools.Result{Text: text + "\n" + s.Body}, nil
			}),
	}
}
