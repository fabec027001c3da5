"""The clock of whose turn it is (issue 20, item 3): ``Batch.turn_limit_s``; ``Match.turn_since``,
``turn_limit``, ``stalled_role``, ``stalled_at``; the outcome ``timed_out`` (the game clock ran
out) renamed ``time_up``, so that ``timed_out`` means "did not take your turn in time"."""
from django.db import migrations, models


def rename_outcome(apps, schema_editor, old="timed_out", new="time_up"):
    """Participants and batches recorded before the rename: their ``timed_out`` was the game clock."""
    Participant = apps.get_model("games", "Participant")
    Batch = apps.get_model("games", "Batch")
    Participant.objects.filter(exit_reason=old).update(exit_reason=new)
    Participant.objects.filter(outcome=old).update(outcome=new)
    for batch in Batch.objects.all():
        changed = False
        for field in ("exit_pay", "prolific_codes"):
            value = getattr(batch, field)
            if isinstance(value, dict) and old in value and new not in value:
                value[new] = value.pop(old)
                changed = True
        if changed:
            batch.save(update_fields=["exit_pay", "prolific_codes"])


def rename_back(apps, schema_editor):
    rename_outcome(apps, schema_editor, old="time_up", new="timed_out")


class Migration(migrations.Migration):

    dependencies = [
        ('games', '0011_participant_presence'),
    ]

    operations = [
        migrations.AddField(
            model_name='batch',
            name='turn_limit_s',
            field=models.PositiveIntegerField(
                blank=True, null=True,
                help_text="A person who does not take their turn (the move the game waits for: chat alone does not "
                          "count) for this long has timed out: the partner may end the game with full pay, and the "
                          "one who stalled gets the pay for 'timed_out'. Empty: the game's default; 0: never."),
        ),
        migrations.AddField(
            model_name='match',
            name='turn_since',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='match',
            name='turn_limit',
            field=models.DurationField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='match',
            name='stalled_role',
            field=models.CharField(blank=True, default='', max_length=32),
        ),
        migrations.AddField(
            model_name='match',
            name='stalled_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddIndex(
            model_name='match',
            index=models.Index(condition=models.Q(('status', 'active'), ('turn_since__isnull', False)),
                               fields=['turn_since'], name='match_turn_due'),
        ),
        migrations.RunPython(rename_outcome, rename_back, elidable=True),
    ]
