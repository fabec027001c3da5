"""GuessWhich's onboarding quiz (crowd/onboarding.py): a few questions on the rules the
instructions page explains. Change ``version`` whenever a question or answer changes: results are
kept per version, so a worker who passed an older quiz takes the new one."""

QUIZ = {
    "version": "1",
    "pass_mark": 3,          # correct answers needed, out of the questions below
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
    ],
}

# The post-game questionnaire a GuessWhich batch asks when it sets none (Batch.questionnaire left
# null; crowd/questionnaire.py): the game's six feedback ratings of the partner, generalised, and a
# comment. Asked of the questioner (the answerer never saw the partner's answers).
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
