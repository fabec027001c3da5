"""The color reference game's onboarding quiz (crowd/onboarding.py). Change ``version`` whenever a
question or answer changes: results are kept per version."""

QUIZ = {
    "version": "1",
    "pass_mark": 3,
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
    ],
}

# The practice round (Batch.onboarding == "practice"): two rounds as the listener against the
# lexicon speaker agent, passed when the game was played to its end with at least one right pick.
# It is not a game of the batch: no batch, not counted, not exported (games.models.PracticeRound).
PRACTICE = {
    "version": "1",
    "role": "listener",
    "agents": {"speaker": "colors_lexicon_speaker"},
    "config": {"rounds": 2},
    "max_attempts": 2,
    "min_score": 1,              # right picks needed (the match outcome's "correct")
    "score_key": "correct",
}
