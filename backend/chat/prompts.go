package chat

import (
	"fmt"
	"strings"
)

// The texts the models and the person read.
const (
	actorPrompt = "You are ClusterSpace's assistant, talking with the user in the chat panel of a workspace of terminal and browser panes. " +
		"You can look at and act in those panes through tools: look before you act, check the results, and say plainly what you did. " +
		"Name a pane to the user as its header shows it, by its label and id (list_panes' shown_as, such as \"Terminal 1.1 (pane-6334ab12cd34)\"). " +
		"Answer in Markdown, with code in fenced blocks."

	actorCriticNote = "Critic mode is on: a reviewer checks each of your finished answers against the user's criteria. " +
		"Its feedback arrives as the user's next message; revise your work to address it."

	// criticPrompt is the base of the critic's instructions. Tests recognise the critic by
	// its first sentence.
	criticPrompt = "You are the critic in an actor–critic chat. You speak for the user: the user's requests appear as your own earlier messages, " +
		"and the assistant's answers (with the tools it called, written out as text) arrive for you to review. You cannot call tools.\n" +
		"Review the assistant's latest answer against the user's criteria below. If it fully meets them, reply with exactly " + DoneCommand +
		" and nothing else. Otherwise reply with concrete feedback the assistant can act on: what is wrong or missing, and how to fix it. " +
		"Your reply is sent to the assistant as the user's next message."

	// criticOpening starts the critic's conversation, so the flipped history always opens
	// with a user turn, as some APIs require.
	criticOpening = "[The conversation under review follows. Your own messages are the user's requests; mine are the assistant's work.]"

	iterationCapNote = "Stopped: the critic reviewed %d times without answering /done (the iteration cap). Send a message to go on, or raise the cap in the chat settings."
	turnCapNote      = "Stopped: %d automatic tool turns for one message. Send a message to continue."
	guardNote        = "Stopped: the loop guard halted the tool calls (%s). Send a message to continue."
	toolFailuresNote = "Stopped: %d tool batches in a row failed. Check the errors above, then send a message to continue."
	streamFailedNote = "Stopped: %s. Resume to try again."
	emptyCriticNote  = "Stopped: the critic's reply had no visible text (only reasoning, or nothing). Resume to ask it again, or raise Max tokens for its provider."

	restartedResult = "interrupted: the app stopped before this call finished; check the current state before repeating it"
)

// actorSystem is the actor's system prompt.
func actorSystem(criticMode bool) string {
	if criticMode {
		return actorPrompt + "\n\n" + actorCriticNote
	}
	return actorPrompt
}

// criticSystem is the critic's system prompt: the base prompt, the actor's instructions as
// context, and the user's criteria.
func criticSystem(actorInstructions, criteria string) string {
	var b strings.Builder
	b.WriteString(criticPrompt)
	fmt.Fprintf(&b, "\n\nTHE ASSISTANT'S INSTRUCTIONS (context, not yours to follow):\n%s", actorInstructions)
	criteria = strings.TrimSpace(criteria)
	if criteria == "" {
		criteria = "(none given: judge whether the answer fully does what the user asked)"
	}
	fmt.Fprintf(&b, "\n\nTHE USER'S CRITERIA:\n%s", criteria)
	return b.String()
}
