# Written by hand (issue 22): the seat (it points at crowd.Participant, made by crowd 0004) and the
# batch's excluded studies (crowd.Study), moved from games. State only: games_seat and
# games_batch_excluded_studies stay as they are (the many-to-many table's name comes from
# Batch's db_table).


import django.db.models.deletion

import live.models
from django.db import migrations, models

STATE_OPERATIONS = [
    migrations.CreateModel(
        name='Seat',
        fields=[
            ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
            ('role', models.CharField(max_length=32)),
            ('kind', models.CharField(choices=[('human', 'Human'), ('agent', 'Agent')], max_length=8)),
            ('agent_name', models.CharField(blank=True, max_length=64)),
            ('agent_model', models.JSONField(blank=True, default=dict)),
            ('token', models.CharField(default=live.models.new_token, max_length=64, unique=True)),
            ('connected', models.PositiveIntegerField(default=0)),
            ('last_seen_at', models.DateTimeField(blank=True, null=True)),
            ('left_at', models.DateTimeField(blank=True, null=True)),
            ('match', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='seats', to='live.match')),
            ('participant', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='seats', to='crowd.participant')),
        ],
        options={
            'db_table': 'games_seat',
        },
    ),
    migrations.AddConstraint(
        model_name='seat',
        constraint=models.UniqueConstraint(fields=('match', 'role'), name='seat_unique_role'),
    ),
    migrations.AddField(
        model_name='batch',
        name='excluded_studies',
        field=models.ManyToManyField(blank=True, help_text='A worker who took part in any batch of these studies cannot enter this batch.', related_name='excluding_batches', to='crowd.study'),
    ),
]


class Migration(migrations.Migration):

    dependencies = [
        ('live', '0001_initial'),
        ('crowd', '0004_moved_from_games'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=STATE_OPERATIONS, database_operations=[]),
    ]
