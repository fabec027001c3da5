"""GuessWhich's onboarding quiz (crowd/onboarding.py): a bank of questions on the rules the
instructions page explains (templates/lobby/instructions_guesswhich.html), of which each attempt
asks ``ask``. Change ``version`` whenever a question or answer changes: results are
kept per version, so a worker who passed an older quiz takes the new one."""
from games.guesswhich.rules import C

QUIZ = {
    "version": "2",          # 2: a bank of eight, five drawn per attempt (issue 21, item 7)
    "ask": 5,                # questions per attempt, drawn from the bank and shuffled with their choices
    "pass_mark": 4,          # correct answers needed, out of ``ask``
    "max_attempts": 2,
    "questions": [
        {"id": "goal", "text": "As the questioner, what is your goal?",
         "choices": ["Describe the secret image to your partner",
                     "Find the secret image among the pool by asking questions",
                     "Answer your partner's questions about an image"],
         "answer": 1},
        {"id": "per_round", "text": "How many questions do you ask in one round?",
         "choices": ["One", "As many as you like", "None: you only click images"],
         "answer": 0},
        {"id": "wrong_click", "text": "After the last round, what does a wrong click on an image do?",
         "choices": ["Nothing", "It ends the game", "It costs 10 points and the image is greyed out"],
         "answer": 2},
        {"id": "answerer", "text": "As the answerer, how should you answer?",
         "choices": ["Truthfully and briefly, from what you see in the image",
                     "With a guess of which image your partner holds",
                     "With as long a description as possible"],
         "answer": 0},
        {"id": "best_guess", "text": "As the questioner, what do you click after each answer?",
         "choices": ["Nothing until the last round",
                     "Your best guess: the image you now think is the secret one",
                     "The image that least matches the caption"],
         "answer": 1},
        {"id": "caption", "text": "As the questioner, what do you know about the secret image at the start?",
         "choices": ["Nothing at all", "Its position in the pool", "A one-sentence caption of it"],
         "answer": 2},
        {"id": "bonus", "text": "What adds 10 points to the questioner's bonus?",
         "choices": ["Every round whose best guess was the secret image", "Every question asked",
                     "Answering within ten seconds"],
         "answer": 0},
        {"id": "images", "text": "What do the images show?",
         "choices": ["Photos of animals and people",
                     "3D scenes of cubes, spheres and cylinders in several colors",
                     "Hand drawings of everyday objects"],
         "answer": 1},
    ],
}

# The post-game questionnaire a GuessWhich batch asks when it sets none (Batch.questionnaire left
# null; crowd/questionnaire.py): the game's six feedback ratings of the partner, generalised, and a
# comment. The ratings are for the questioner (the answerer never saw the partner's answers), and
# the game asks them itself in its feedback phase: the questionnaire leaves out what the game asked
# (``asked_in_game`` below), so a questioner whose game reached the feedback phase is asked only
# the comment, and one whose game ended before it (a timeout) is asked the ratings there instead.
QUESTIONNAIRE = [
    *({"id": key, "kind": "likert", "text": text, "about": "partner", "min": 1, "max": 5, "required": True,
       "roles": ["questioner"]}
      for key, text in (("understood_question", "Your partner understood your questions"),
                        ("understood_image", "Your partner understood the secret image"),
                        ("fluency", "The answers were fluent"),
                        ("detail", "The answers were detailed"),
                        ("accuracy", "The answers were accurate"),
                        ("consistency", "The answers were consistent with each other"))),
    {"id": "comment", "kind": "text", "text": "Anything else about your partner or the game? (optional)",
     "about": "study", "required": False, "max_length": 1000},
]


def asked_in_game(state: dict, role: str) -> dict:
    """The questionnaire items this game asked ``role`` itself in a match now in ``state``, by
    question id, with the answers it got (``None`` for each where the feedback was skipped): the
    six ratings, once the questioner's game reached its feedback phase (``rules.feedback``).
    crowd/questionnaire.py does not ask these again and exports these answers with its own."""
    feedback = state.get("feedback")
    if role != "questioner" or feedback is None:
        return {}
    ratings = feedback.get("ratings") or {}
    return {key: ratings.get(key) for key in C.RATING_KEYS}
