# Written by hand (issue 22): the live-match platform's models, moved from games/models.py to
# live/models.py. State only: their tables (games_batch, games_content, games_match, games_matchevent)
# stay as games/migrations made them, with the same columns, indexes and constraints (each model's
# Meta.db_table keeps the old name). Seat follows in 0002 (its participant is a crowd model, made in
# crowd 0004); games 0015 removes the old states and moves the content types.


import django.db.models.deletion
import uuid

import live.models
from django.db import migrations, models

STATE_OPERATIONS = [
    migrations.CreateModel(
        name='Batch',
        fields=[
            ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
            ('slug', models.SlugField(unique=True)),
            ('title', models.CharField(max_length=200)),
            ('game_id', models.CharField(max_length=64)),
            ('pairing', models.CharField(choices=[('human-human', 'Human Human'), ('human-agent', 'Human Agent'), ('agent-agent', 'Agent Agent')], default='human-human', max_length=16)),
            ('human_roles', models.JSONField(blank=True, default=list, help_text="Roles humans may take (empty: all the game's roles).")),
            ('agents', models.JSONField(blank=True, default=dict, help_text='Agent per role for agent seats, e.g. {"speaker": "colors_lexicon_speaker"}.')),
            ('games_per_worker', models.PositiveIntegerField(default=1)),
            ('max_wait_s', models.PositiveIntegerField(default=120)),
            ('inactivity_limit_s', models.PositiveIntegerField(default=600, help_text="A match with no action for this long is aborted (reason 'inactive') and its workers are let go; 0: never.")),
            ('turn_limit_s', models.PositiveIntegerField(blank=True, help_text="A person who does not take their turn (the move the game waits for: chat alone does not count) for this long has timed out: the partner may end the game with full pay, and the one who stalled gets the pay for 'timed_out'. Empty: the game's default; 0: never.", null=True)),
            ('on_timeout', models.CharField(choices=[('agent', 'pair with an agent'), ('leave', 'leave with pay and a code')], default='leave', max_length=8)),
            ('on_partner_absent', models.CharField(choices=[('requeue', 'back to the waiting room, first in the queue'), ('end', 'end with the pay for partner_left')], default='requeue', help_text='When a paired partner never opens the game (live/presence.py): the worker who came goes back to the waiting room ahead of everyone, keeping the time already waited, or ends with the pay for partner_left.', max_length=8)),
            ('config', models.JSONField(blank=True, default=dict, help_text='Game settings (e.g. rounds).')),
            ('content_pool', models.JSONField(blank=True, default=list, help_text='Ids of Content rows to draw from (empty: generate from seeds).')),
            ('pay_cents', models.PositiveIntegerField(default=0)),
            ('bonus_cents', models.PositiveIntegerField(default=0)),
            ('instructions', models.TextField(blank=True)),
            ('status', models.CharField(choices=[('open', 'Open'), ('closed', 'Closed')], default='open', max_length=8)),
            ('created_at', models.DateTimeField(auto_now_add=True)),
            ('entry_kinds', models.JSONField(blank=True, default=live.models.default_entry_kinds, help_text='How workers may enter: any of "mturk", "prolific", "lab" (signed per-person links from the lab links page); "demo" (open entry, embedded mode only).')),
            ('allow_device_change', models.BooleanField(default=False, help_text='A worker may move to another browser with a one-time code shown in the first one (which then loses the seat).')),
            ('lab_key', models.CharField(default=live.models.new_lab_key, help_text="Part of every lab link's signature: change it to revoke all lab links.", max_length=32)),
            ('exit_pay', models.JSONField(blank=True, default=dict, help_text='Pay per outcome, e.g. {"no_partner": {"pay": "partial", "cents": 50}, "returned_early": {"pay": "none"}}; outcomes not named keep their defaults (docs/crowd.md).')),
            ('prolific_codes', models.JSONField(blank=True, default=dict, help_text='Prolific completion code per outcome, as Prolific issued them, e.g. {"completed": "C1A2B3C4"}.')),
            ('expected_minutes', models.PositiveIntegerField(default=10, help_text='The time a worker should expect to spend (shown on the MTurk preview).')),
            ('onboarding', models.CharField(blank=True, choices=[('', 'none'), ('quiz', 'instructions quiz'), ('practice', 'practice round against an agent')], default='', help_text="What a worker must pass before being paired: the game's quiz or practice round (games/<game>/onboarding.py); the result is kept per worker, game and version and reused by other batches.", max_length=16)),
            ('unverified_pairing', models.CharField(choices=[('agent', 'only with an agent'), ('none', 'not at all until verified')], default='agent', help_text='A worker whose id MTurk or Prolific could not confirm at entry (the platform did not answer) plays only against an agent, or is not paired until the platform confirms them. Either way they are verified again before any pay.', max_length=8)),
            ('allow_shared_address', models.BooleanField(default=False, help_text='Pair two people who come from the same client address (a lab whose machines share one address). Off: never pair them (one person in two browsers).')),
            ('questionnaire', models.JSONField(blank=True, default=None, help_text='Post-game questions: a list of {"id", "kind": "likert" | "text", "text", "about": "partner" | "study", "required", "min", "max"}. Left null: the game\'s default (GuessWhich: its six feedback ratings of the partner); []: no questionnaire.', null=True)),
        ],
        options={
            'db_table': 'games_batch',
        },
    ),
    migrations.CreateModel(
        name='Content',
        fields=[
            ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
            ('game_id', models.CharField(db_index=True, max_length=64)),
            ('key', models.CharField(max_length=200)),
            ('data', models.JSONField()),
            ('provenance', models.JSONField(default=dict)),
            ('created_at', models.DateTimeField(auto_now_add=True)),
        ],
        options={
            'db_table': 'games_content',
            'constraints': [models.UniqueConstraint(fields=('game_id', 'key'), name='content_game_key_unique')],
        },
    ),
    migrations.CreateModel(
        name='Match',
        fields=[
            ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
            ('game_id', models.CharField(max_length=64)),
            ('seed', models.BigIntegerField()),
            ('config', models.JSONField(default=dict)),
            ('content', models.JSONField()),
            ('state', models.JSONField()),
            ('state_static', models.JSONField(blank=True, null=True)),
            ('agent_seats', models.JSONField(default=dict, help_text='role -> agent name, for the seats agents play.')),
            ('seq', models.PositiveIntegerField(default=0)),
            ('status', models.CharField(choices=[('active', 'Active'), ('finished', 'Finished'), ('timed_out', 'Timed Out'), ('aborted', 'Aborted')], default='active', max_length=12)),
            ('outcome', models.JSONField(default=dict)),
            ('created_at', models.DateTimeField(auto_now_add=True, db_index=True)),
            ('updated_at', models.DateTimeField(auto_now=True)),
            ('finished_at', models.DateTimeField(blank=True, null=True)),
            ('agent_due_since', models.DateTimeField(blank=True, null=True)),
            ('deadline_at', models.DateTimeField(blank=True, null=True)),
            ('inactivity_limit', models.DurationField(blank=True, null=True)),
            ('turn_since', models.DateTimeField(blank=True, null=True)),
            ('turn_limit', models.DurationField(blank=True, null=True)),
            ('stalled_role', models.CharField(blank=True, default='', max_length=32)),
            ('stalled_at', models.DateTimeField(blank=True, null=True)),
            ('batch', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='matches', to='live.batch')),
            ('content_ref', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to='live.content')),
        ],
        options={
            'db_table': 'games_match',
        },
    ),
    migrations.CreateModel(
        name='MatchEvent',
        fields=[
            ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
            ('seq', models.PositiveIntegerField()),
            ('type', models.CharField(max_length=64)),
            ('actor', models.CharField(max_length=32)),
            ('payload', models.JSONField(default=dict)),
            ('private', models.JSONField(blank=True, null=True)),
            ('action', models.JSONField(blank=True, null=True)),
            ('client_action_id', models.CharField(blank=True, default='', max_length=64)),
            ('t', models.BigIntegerField(help_text='Server time, ms since the epoch.')),
            ('match', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='events', to='live.match')),
        ],
        options={
            'db_table': 'games_matchevent',
            'ordering': ['match', 'seq'],
        },
    ),
    migrations.AddIndex(
        model_name='match',
        index=models.Index(condition=models.Q(('status', 'active'), ('turn_since__isnull', False)), fields=['turn_since'], name='match_turn_due'),
    ),
    migrations.AddIndex(
        model_name='match',
        index=models.Index(condition=models.Q(('agent_due_since__isnull', False), ('status', 'active')), fields=['agent_due_since'], name='match_agent_due'),
    ),
    migrations.AddIndex(
        model_name='match',
        index=models.Index(condition=models.Q(('deadline_at__isnull', False), ('status', 'active')), fields=['deadline_at'], name='match_deadline'),
    ),
    migrations.AddIndex(
        model_name='match',
        index=models.Index(condition=models.Q(('inactivity_limit__isnull', False), ('status', 'active')), fields=['updated_at'], name='match_idle'),
    ),
    migrations.AddIndex(
        model_name='matchevent',
        index=models.Index(fields=['match', 'actor', 'client_action_id'], name='event_client_action'),
    ),
    migrations.AddConstraint(
        model_name='matchevent',
        constraint=models.UniqueConstraint(fields=('match', 'seq'), name='event_unique_seq'),
    ),
]


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('games', '0014_quiz_attempts'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=STATE_OPERATIONS, database_operations=[]),
    ]
