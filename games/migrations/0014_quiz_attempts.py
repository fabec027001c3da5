# Hand-written (issue 21, item 7): one row per onboarding quiz attempt, with the questions drawn for
# it (seeded per attempt) and the client address it was opened from.
# Depends on 0013 (issue 21, items 1-3): the graph keeps one leaf.
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("games", "0013_participant_verification"),
    ]

    operations = [
        migrations.CreateModel(
            name="QuizAttempt",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("number", models.PositiveIntegerField()),
                ("seed", models.BigIntegerField()),
                ("drawn", models.JSONField(default=list)),
                ("game_id", models.CharField(max_length=64)),
                ("client_addr", models.CharField(blank=True, default="", max_length=64)),
                ("counted", models.BooleanField(default=True)),
                ("answers", models.JSONField(blank=True, null=True)),
                ("correct", models.PositiveIntegerField(blank=True, null=True)),
                ("passed", models.BooleanField(blank=True, null=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("submitted_at", models.DateTimeField(blank=True, null=True)),
                ("participant", models.ForeignKey(blank=True, null=True,
                                                  on_delete=django.db.models.deletion.SET_NULL,
                                                  related_name="quiz_attempts", to="games.participant")),
                ("result", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE,
                                             related_name="quiz_attempts", to="games.onboardingresult")),
            ],
            options={
                "constraints": [models.UniqueConstraint(fields=("result", "number"),
                                                        name="quiz_attempt_number_unique")],
                "indexes": [models.Index(fields=["client_addr", "game_id", "created_at"],
                                         name="quiz_attempt_address")],
            },
        ),
    ]
