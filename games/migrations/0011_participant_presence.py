"""Presence of waiting participants and never-connected seats (issue 20, item 2): the waiting
page's last poll on Participant, and what a batch does when a paired partner never opens the game."""
from django.db import migrations, models
from django.db.models import F


def seen_when_waiting(apps, schema_editor):
    # a worker already waiting counts as last heard when they began to wait (not paired if that is old)
    Participant = apps.get_model("games", "Participant")
    Participant.objects.filter(state="waiting").update(last_seen_at=F("waiting_since"))


class Migration(migrations.Migration):

    dependencies = [
        ('games', '0010_practice_round'),
    ]

    operations = [
        migrations.AddField(
            model_name='participant',
            name='last_seen_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='batch',
            name='on_partner_absent',
            field=models.CharField(
                choices=[('requeue', 'back to the waiting room, first in the queue'),
                         ('end', 'end with the pay for partner_left')],
                default='requeue',
                help_text='When a paired partner never opens the game (live/presence.py): the worker who came '
                          'goes back to the waiting room ahead of everyone, keeping the time already waited, or '
                          'ends with the pay for partner_left.',
                max_length=8),
        ),
        migrations.RunPython(seen_when_waiting, migrations.RunPython.noop),
    ]
