package main

import (
	"github.com/clusterspace/clusterspace/backend/config"
	"github.com/clusterspace/clusterspace/backend/terminal"
)

// ListSSHServers returns the saved SSH servers (passwords never included).
func (a *App) ListSSHServers() ([]config.SSHServer, error) { return a.eng.SSH.List(a.ctx) }

// SaveSSHServer adds (id "") or edits a server; password nil keeps it, "" removes it.
func (a *App) SaveSSHServer(id string, in config.SSHInput) (config.SSHServer, error) {
	return a.eng.SSH.Save(a.ctx, id, in)
}

// DeleteSSHServer removes a saved server and its password.
func (a *App) DeleteSSHServer(id string) error { return a.eng.SSH.Delete(a.ctx, id) }

// TerminalOpenSSH opens a tab in the pane connected to a saved server, inside the pane's
// tmux session there.
func (a *App) TerminalOpenSSH(paneID, serverID string, cols, rows int) (terminal.TabInfo, error) {
	r, err := a.eng.SSH.Resolve(a.ctx, serverID)
	if err != nil {
		return terminal.TabInfo{}, err
	}
	target := sshTarget(r)
	cols, rows = sizeOr(cols, rows)
	return a.eng.Terminals.Open(a.ctx, terminal.Spec{PaneID: paneID, Cols: cols, Rows: rows, SSH: &target})
}

// RemoteSessions lists the tmux sessions on a saved server.
func (a *App) RemoteSessions(serverID string) ([]terminal.RemoteSession, error) {
	r, err := a.eng.SSH.Resolve(a.ctx, serverID)
	if err != nil {
		return nil, err
	}
	return a.eng.Terminals.RemoteSessions(a.ctx, sshTarget(r))
}

// KillRemoteSession ends a tmux session on a saved server.
func (a *App) KillRemoteSession(serverID, name string) error {
	r, err := a.eng.SSH.Resolve(a.ctx, serverID)
	if err != nil {
		return err
	}
	return a.eng.Terminals.KillRemoteSession(a.ctx, sshTarget(r), name)
}

// sshTarget turns a saved server into what the terminal engine connects to.
func sshTarget(r config.SSHResolved) terminal.SSHTarget {
	return terminal.SSHTarget{Host: r.Host, Port: r.Port, User: r.User, KeyPath: r.KeyPath, Password: r.Password}
}
