# Hand-written (issue 21, items 1-3): who is who, per participant and per batch.
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("games", "0012_match_turn_clock"),
    ]

    operations = [
        migrations.AddField(
            model_name="batch",
            name="unverified_pairing",
            field=models.CharField(
                choices=[("agent", "only with an agent"), ("none", "not at all until verified")],
                default="agent",
                help_text="A worker whose id MTurk or Prolific could not confirm at entry (the platform did not "
                          "answer) plays only against an agent, or is not paired until the platform confirms them. "
                          "Either way they are verified again before any pay.",
                max_length=8),
        ),
        migrations.AddField(
            model_name="batch",
            name="allow_shared_address",
            field=models.BooleanField(
                default=False,
                help_text="Pair two people who come from the same client address (a lab whose machines share one "
                          "address). Off: never pair them (one person in two browsers)."),
        ),
        migrations.AddField(model_name="participant", name="verification",
                            field=models.CharField(blank=True, default="", max_length=12)),
        migrations.AddField(model_name="participant", name="verified_at",
                            field=models.DateTimeField(blank=True, null=True)),
        migrations.AddField(model_name="participant", name="verify_tried_at",
                            field=models.DateTimeField(blank=True, null=True)),
        migrations.AddField(model_name="participant", name="verify_note",
                            field=models.CharField(blank=True, default="", max_length=300)),
        migrations.AddField(model_name="participant", name="browser",
                            field=models.CharField(blank=True, default="", max_length=64)),
        migrations.AddField(model_name="participant", name="client_addr",
                            field=models.GenericIPAddressField(blank=True, null=True)),
        migrations.AddField(model_name="participant", name="assignments",
                            field=models.JSONField(blank=True, default=list)),
    ]
