"""The color reference game's onboarding quiz (crowd/onboarding.py): a bank of questions on what
templates/lobby/instructions_colors.html says, of which each attempt asks ``ask``. Change
``version`` whenever a question or answer changes: results are kept per version."""

QUIZ = {
    "version": "2",        # 2: a bank of eight, four drawn per attempt (issue 21, item 7)
    "ask": 4,              # questions per attempt, drawn from the bank and shuffled with their choices
    "pass_mark": 4,        # correct answers needed, out of ``ask``
    "max_attempts": 2,
    "questions": [
        {"id": "speaker", "text": "What does the speaker do?",
         "choices": ["Clicks the color they think is the target",
                     "Describes the target color (the one with a black frame) in the chat",
                     "Chooses which color is the target"],
         "answer": 1},
        {"id": "order", "text": "Why should you not say \"left\" or \"right\"?",
         "choices": ["The colors are in a different order on each screen",
                     "It is too easy", "The listener cannot see the colors"],
         "answer": 0},
        {"id": "round_end", "text": "What ends a round?",
         "choices": ["The speaker's first message", "A timer", "The listener's click on a color"],
         "answer": 2},
        {"id": "listener", "text": "What does the listener do?",
         "choices": ["Reads the description and clicks the color they think it is",
                     "Describes the target color in the chat",
                     "Sees which color has the black frame and names it"],
         "answer": 0},
        {"id": "target", "text": "How does the speaker know which color is the target?",
         "choices": ["It is always the one in the middle", "It has a black frame",
                     "The listener tells them in the chat"],
         "answer": 1},
        {"id": "chat", "text": "Who may write in the chat?",
         "choices": ["Only the speaker, once per round", "Only the listener",
                     "Both players, as much as they like"],
         "answer": 2},
        {"id": "screens", "text": "What do the two players see?",
         "choices": ["The same three colors, in a different order on each screen",
                     "Three different colors each", "The same three colors in the same order"],
         "answer": 0},
        {"id": "outcome", "text": "After the listener's click, who sees whether it was the target?",
         "choices": ["Nobody until the game ends", "Only the speaker", "Both players"],
         "answer": 2},
    ],
}

# The practice round (Batch.onboarding == "practice"): two rounds as the listener against the
# lexicon speaker agent, passed when the game was played to its end with at least one right pick.
# It is not a game of the batch: no batch, not counted, not exported (crowd.models.PracticeRound).
PRACTICE = {
    "version": "1",
    "role": "listener",
    "agents": {"speaker": "colors_lexicon_speaker"},
    "config": {"rounds": 2},
    "max_attempts": 2,
    "min_score": 1,              # right picks needed (the match outcome's "correct")
    "score_key": "correct",
}
