// Package docs holds the project's documentation, the Markdown files beside this one. It has
// no code: its tests keep the README short and every link of the README and the docs
// pointing at something, docs/cli.md equal to the commands' own help, the map of the tree
// naming every package and the manual every keyboard shortcut.
package docs
