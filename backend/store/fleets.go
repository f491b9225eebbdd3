package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/clusterspace/clusterspace/backend/fleet"
)

// SaveFleet writes a fleet and all its tasks in one transaction.
func (s *Store) SaveFleet(ctx context.Context, f fleet.Fleet) error {
	spec, err := json.Marshal(f.Spec)
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO fleets(id, name, status, spec, created_at, updated_at) VALUES(?, ?, ?, ?, ?, ?)
			ON CONFLICT(id) DO UPDATE SET name = excluded.name, status = excluded.status, spec = excluded.spec, updated_at = excluded.updated_at`,
			f.ID, f.Name, string(f.Status), string(spec), ms(f.CreatedAt), ms(f.UpdatedAt)); err != nil {
			return fmt.Errorf("save fleet %s: %w", f.ID, err)
		}
		for _, t := range f.Tasks {
			ts, err := json.Marshal(t.TaskSpec)
			if err != nil {
				return err
			}
			wt, err := optionalJSON(t.Worktree)
			if err != nil {
				return err
			}
			review, err := optionalJSON(t.Review)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO fleet_tasks(fleet_id, task_id, seq, spec, status, reason, goal_id, report, created_at, started_at, ended_at, worktree, review)
				VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT(fleet_id, task_id) DO UPDATE SET seq = excluded.seq, spec = excluded.spec, status = excluded.status, reason = excluded.reason,
					goal_id = excluded.goal_id, report = excluded.report, started_at = excluded.started_at, ended_at = excluded.ended_at, worktree = excluded.worktree, review = excluded.review`,
				f.ID, t.ID, t.Seq, string(ts), string(t.Status), t.Reason, t.GoalID, t.Report, ms(t.CreatedAt), msPtr(t.StartedAt), msPtr(t.EndedAt), wt, review); err != nil {
				return fmt.Errorf("save task %s of fleet %s: %w", t.ID, f.ID, err)
			}
		}
		return nil
	})
}

// Fleet returns one fleet with its tasks, or fleet.ErrNotFound.
func (s *Store) Fleet(ctx context.Context, id string) (fleet.Fleet, error) {
	f, err := scanFleet(s.db.QueryRowContext(ctx, `SELECT id, name, status, spec, created_at, updated_at FROM fleets WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return f, fmt.Errorf("fleet %q: %w", id, fleet.ErrNotFound)
	}
	if err != nil {
		return f, err
	}
	f.Tasks, err = s.fleetTasks(ctx, id)
	return f, err
}

// ListFleets returns every fleet with its tasks, newest first.
func (s *Store) ListFleets(ctx context.Context) ([]fleet.Fleet, error) {
	// Every fleet is read (and the rows closed) before any fleet's tasks are.
	out, err := queryAll(ctx, s.db, scanFleet, `SELECT id, name, status, spec, created_at, updated_at FROM fleets ORDER BY created_at DESC, id`)
	if err != nil {
		return nil, err
	}
	for i := range out {
		if out[i].Tasks, err = s.fleetTasks(ctx, out[i].ID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DeleteFleet removes a fleet and its tasks (their goals stay).
func (s *Store) DeleteFleet(ctx context.Context, id string) error {
	return s.deleteAllOf(ctx, id, `DELETE FROM fleet_tasks WHERE fleet_id = ?`, `DELETE FROM fleets WHERE id = ?`)
}

func scanFleet(r scanner) (fleet.Fleet, error) {
	var f fleet.Fleet
	var spec string
	var t stamps
	if err := r.Scan(&f.ID, &f.Name, &f.Status, &spec, &t.created, &t.updated); err != nil {
		return f, err
	}
	if err := json.Unmarshal([]byte(spec), &f.Spec); err != nil {
		return f, fmt.Errorf("fleet %s: stored spec unreadable: %w", f.ID, err)
	}
	f.CreatedAt, f.UpdatedAt = t.times()
	return f, nil
}

func (s *Store) fleetTasks(ctx context.Context, id string) ([]fleet.Task, error) {
	return queryAll(ctx, s.db, scanTask, `SELECT task_id, seq, spec, status, reason, goal_id, report, created_at, started_at, ended_at, worktree, review
		FROM fleet_tasks WHERE fleet_id = ? ORDER BY seq`, id)
}

func scanTask(r scanner) (fleet.Task, error) {
	var t fleet.Task
	var id, spec, wt, review string
	var created int64
	var started, ended sql.NullInt64
	if err := r.Scan(&id, &t.Seq, &spec, &t.Status, &t.Reason, &t.GoalID, &t.Report, &created, &started, &ended, &wt, &review); err != nil {
		return t, err
	}
	if wt != "" {
		t.Worktree = new(fleet.Worktree)
		if err := json.Unmarshal([]byte(wt), t.Worktree); err != nil {
			return t, fmt.Errorf("task %s: stored worktree unreadable: %w", id, err)
		}
	}
	if review != "" {
		t.Review = new(fleet.Review)
		if err := json.Unmarshal([]byte(review), t.Review); err != nil {
			return t, fmt.Errorf("task %s: stored review unreadable: %w", id, err)
		}
	}
	if err := json.Unmarshal([]byte(spec), &t.TaskSpec); err != nil {
		return t, fmt.Errorf("task %s: stored spec unreadable: %w", id, err)
	}
	t.ID = id
	t.CreatedAt, t.StartedAt, t.EndedAt = at(created), fromMS(started), fromMS(ended)
	return t, nil
}

// SaveAgent writes a pane's agent: its role, purpose and inbox.
func (s *Store) SaveAgent(ctx context.Context, a fleet.AgentRecord) error {
	inbox, err := json.Marshal(a.Inbox)
	if err != nil {
		return err
	}
	if a.Inbox == nil {
		inbox = []byte("[]")
	}
	return s.save(ctx, "save the agent of pane "+a.PaneID, `INSERT INTO fleet_agents(pane_id, role, purpose, inbox, updated_at) VALUES(?, ?, ?, ?, ?)
		ON CONFLICT(pane_id) DO UPDATE SET role = excluded.role, purpose = excluded.purpose, inbox = excluded.inbox, updated_at = excluded.updated_at`,
		a.PaneID, a.Role, a.Purpose, string(inbox), ms(a.UpdatedAt))
}

// AgentRecords returns every stored agent, by pane id.
func (s *Store) AgentRecords(ctx context.Context) ([]fleet.AgentRecord, error) {
	return queryAll(ctx, s.db, scanAgent, `SELECT pane_id, role, purpose, inbox, updated_at FROM fleet_agents ORDER BY pane_id`)
}

func scanAgent(r scanner) (fleet.AgentRecord, error) {
	var a fleet.AgentRecord
	var inbox string
	var updated int64
	if err := r.Scan(&a.PaneID, &a.Role, &a.Purpose, &inbox, &updated); err != nil {
		return a, err
	}
	if err := json.Unmarshal([]byte(inbox), &a.Inbox); err != nil {
		return a, fmt.Errorf("agent of pane %s: stored inbox unreadable: %w", a.PaneID, err)
	}
	a.UpdatedAt = at(updated)
	return a, nil
}
