# Issue 24: a batch's arms, its assignment and randomisation seed, the per-batch counter row
# (live/arms.py) and each match's arm and assignment. Existing batches get a seed drawn here.

import django.db.models.deletion
import secrets

from django.db import migrations, models


def seed_batches(apps, schema_editor):
    Batch = apps.get_model("live", "Batch")
    for batch in Batch.objects.filter(arm_seed__isnull=True).only("pk"):
        Batch.objects.filter(pk=batch.pk).update(arm_seed=secrets.randbelow(2**31))


class Migration(migrations.Migration):

    dependencies = [
        ('live', '0002_seat_excluded_studies'),
    ]

    operations = [
        migrations.CreateModel(
            name='ArmCounter',
            fields=[
                ('batch', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='arm_counter', serialize=False, to='live.batch')),
                ('seatings', models.PositiveIntegerField(default=0)),
                ('people', models.PositiveIntegerField(default=0)),
            ],
        ),
        migrations.AddField(
            model_name='batch',
            name='arm_seed',
            field=models.BigIntegerField(blank=True, help_text="Seed of the arms' randomisation (blocks shuffled by a generator seeded with it and the block number); drawn and recorded when the batch is saved without one.", null=True),
        ),
        migrations.AddField(
            model_name='batch',
            name='arms',
            field=models.JSONField(blank=True, default=list, help_text='Arms of the experiment: a list of {"name", "agents": {role: agent name}, "config": {setting overrides}, "weight": positive int (default 1), "human_roles": [...]}; an arm with no agents is human-human. Empty: one arm, the batch\'s own agents.'),
        ),
        migrations.AddField(
            model_name='batch',
            name='assignment',
            field=models.CharField(choices=[('between', 'between subjects (each seating draws an arm)'), ('within', 'within subjects (each person meets every arm, counterbalanced)')], default='between', help_text='Between subjects: blocked randomisation of seatings over the arms. Within subjects (games per worker > 1): each person plays the arms in the order of a row of a balanced Latin square, rows drawn by the same blocked scheme.', max_length=8),
        ),
        migrations.AddField(
            model_name='match',
            name='arm',
            field=models.CharField(blank=True, db_index=True, default='', max_length=64),
        ),
        migrations.AddField(
            model_name='match',
            name='assignment',
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.RunPython(seed_batches, migrations.RunPython.noop),
    ]
