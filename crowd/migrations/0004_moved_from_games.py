# Written by hand (issue 22): the crowd's models (Participant, Study, OnboardingResult, QuizAttempt,
# QuestionnaireResponse, PracticeRound) moved from games/models.py to crowd/models.py, and the
# crowd's foreign keys that pointed at games.Batch / games.Participant now point at live.Batch /
# crowd.Participant. State only: the tables (games_participant, ..., games_study_batches) and the
# foreign key constraints are the ones games/migrations and crowd 0001 made.


import django.db.models.deletion

import live.models
from django.db import migrations, models

STATE_OPERATIONS = [
    migrations.CreateModel(
        name='OnboardingResult',
        fields=[
            ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
            ('platform', models.CharField(max_length=16)),
            ('worker_id', models.CharField(max_length=128)),
            ('game_id', models.CharField(max_length=64)),
            ('kind', models.CharField(max_length=16)),
            ('version', models.CharField(max_length=32)),
            ('passed', models.BooleanField(default=False)),
            ('attempts', models.PositiveIntegerField(default=0)),
            ('score', models.FloatField(blank=True, null=True)),
            ('detail', models.JSONField(blank=True, default=dict)),
            ('created_at', models.DateTimeField(auto_now_add=True)),
            ('updated_at', models.DateTimeField(auto_now=True)),
        ],
        options={
            'db_table': 'games_onboardingresult',
        },
    ),
    migrations.CreateModel(
        name='Participant',
        fields=[
            ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
            ('platform', models.CharField(max_length=16)),
            ('worker_id', models.CharField(max_length=128)),
            ('assignment_id', models.CharField(blank=True, max_length=128)),
            ('hit_id', models.CharField(blank=True, max_length=128)),
            ('submit_to', models.CharField(blank=True, max_length=300)),
            ('study_id', models.CharField(blank=True, max_length=128)),
            ('session_id', models.CharField(blank=True, max_length=128)),
            ('token', models.CharField(default=live.models.new_token, max_length=64, unique=True)),
            ('state', models.CharField(choices=[('consent', 'Consent'), ('instructions', 'Instructions'), ('onboarding', 'Onboarding'), ('waiting', 'Waiting'), ('playing', 'Playing'), ('done', 'Done'), ('declined', 'Declined')], default='consent', max_length=16)),
            ('waiting_since', models.DateTimeField(blank=True, null=True)),
            ('last_seen_at', models.DateTimeField(blank=True, null=True)),
            ('games_played', models.PositiveIntegerField(default=0)),
            ('completion_code', models.CharField(default=live.models.new_code, max_length=32)),
            ('exit_reason', models.CharField(blank=True, max_length=32)),
            ('bonus_cents', models.IntegerField(default=0)),
            ('outcome', models.CharField(blank=True, max_length=16)),
            ('pay', models.CharField(blank=True, max_length=8)),
            ('pay_cents', models.IntegerField(blank=True, null=True)),
            ('owner_key', models.CharField(blank=True, max_length=64)),
            ('verification', models.CharField(blank=True, default='', max_length=12)),
            ('verified_at', models.DateTimeField(blank=True, null=True)),
            ('verify_tried_at', models.DateTimeField(blank=True, null=True)),
            ('verify_note', models.CharField(blank=True, default='', max_length=300)),
            ('browser', models.CharField(blank=True, default='', max_length=64)),
            ('client_addr', models.GenericIPAddressField(blank=True, null=True)),
            ('assignments', models.JSONField(blank=True, default=list)),
            ('transfer_code', models.CharField(blank=True, max_length=16)),
            ('transfer_expires_at', models.DateTimeField(blank=True, null=True)),
            ('transfer_misses', models.PositiveSmallIntegerField(default=0)),
            ('created_at', models.DateTimeField(auto_now_add=True)),
            ('consented_at', models.DateTimeField(blank=True, null=True)),
            ('finished_at', models.DateTimeField(blank=True, null=True)),
        ],
        options={
            'db_table': 'games_participant',
        },
    ),
    migrations.CreateModel(
        name='PracticeRound',
        fields=[
            ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
            ('seat_token', models.CharField(max_length=64)),
            ('graded', models.BooleanField(default=False)),
            ('created_at', models.DateTimeField(auto_now_add=True)),
        ],
        options={
            'db_table': 'games_practiceround',
        },
    ),
    migrations.CreateModel(
        name='QuestionnaireResponse',
        fields=[
            ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
            ('questions', models.JSONField(default=list)),
            ('answers', models.JSONField(default=dict)),
            ('created_at', models.DateTimeField(auto_now_add=True)),
        ],
        options={
            'db_table': 'games_questionnaireresponse',
        },
    ),
    migrations.CreateModel(
        name='QuizAttempt',
        fields=[
            ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
            ('number', models.PositiveIntegerField()),
            ('seed', models.BigIntegerField()),
            ('drawn', models.JSONField(default=list)),
            ('game_id', models.CharField(max_length=64)),
            ('client_addr', models.CharField(blank=True, default='', max_length=64)),
            ('counted', models.BooleanField(default=True)),
            ('answers', models.JSONField(blank=True, null=True)),
            ('correct', models.PositiveIntegerField(blank=True, null=True)),
            ('passed', models.BooleanField(blank=True, null=True)),
            ('created_at', models.DateTimeField(auto_now_add=True)),
            ('submitted_at', models.DateTimeField(blank=True, null=True)),
        ],
        options={
            'db_table': 'games_quizattempt',
        },
    ),
    migrations.CreateModel(
        name='Study',
        fields=[
            ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
            ('name', models.CharField(max_length=200, unique=True)),
            ('created_at', models.DateTimeField(auto_now_add=True)),
        ],
        options={
            'verbose_name_plural': 'studies',
            'db_table': 'games_study',
        },
    ),
    migrations.AlterField(
        model_name='bonusrule',
        name='batch',
        field=models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='bonus_rule', to='live.batch'),
    ),
    migrations.AlterField(
        model_name='launch',
        name='batch',
        field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='launches', to='live.batch'),
    ),
    migrations.AddField(
        model_name='onboardingresult',
        name='batch',
        field=models.ForeignKey(blank=True, help_text='The batch in which it was taken.', null=True, on_delete=django.db.models.deletion.SET_NULL, to='live.batch'),
    ),
    migrations.AddField(
        model_name='participant',
        name='batch',
        field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='participants', to='live.batch'),
    ),
    migrations.AlterField(
        model_name='payaction',
        name='participant',
        field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='pay_actions', to='crowd.participant'),
    ),
    migrations.AddField(
        model_name='practiceround',
        name='match',
        field=models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='practice', to='live.match'),
    ),
    migrations.AddField(
        model_name='practiceround',
        name='participant',
        field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='practice_rounds', to='crowd.participant'),
    ),
    migrations.AddField(
        model_name='practiceround',
        name='result',
        field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='practice_rounds', to='crowd.onboardingresult'),
    ),
    migrations.AddField(
        model_name='questionnaireresponse',
        name='match',
        field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to='live.match'),
    ),
    migrations.AddField(
        model_name='questionnaireresponse',
        name='participant',
        field=models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='questionnaire', to='crowd.participant'),
    ),
    migrations.AddField(
        model_name='quizattempt',
        name='participant',
        field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='quiz_attempts', to='crowd.participant'),
    ),
    migrations.AddField(
        model_name='quizattempt',
        name='result',
        field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='quiz_attempts', to='crowd.onboardingresult'),
    ),
    migrations.AddField(
        model_name='study',
        name='batches',
        field=models.ManyToManyField(blank=True, related_name='studies', to='live.batch'),
    ),
    migrations.AddConstraint(
        model_name='onboardingresult',
        constraint=models.UniqueConstraint(fields=('platform', 'worker_id', 'game_id', 'kind', 'version'), name='onboarding_worker_game_unique'),
    ),
    migrations.AddIndex(
        model_name='participant',
        index=models.Index(fields=['batch', 'state', 'waiting_since'], name='games_parti_batch_i_639424_idx'),
    ),
    migrations.AddConstraint(
        model_name='participant',
        constraint=models.UniqueConstraint(fields=('batch', 'platform', 'worker_id'), name='participant_unique_worker'),
    ),
    migrations.AddIndex(
        model_name='quizattempt',
        index=models.Index(fields=['client_addr', 'game_id', 'created_at'], name='quiz_attempt_address'),
    ),
    migrations.AddConstraint(
        model_name='quizattempt',
        constraint=models.UniqueConstraint(fields=('result', 'number'), name='quiz_attempt_number_unique'),
    ),
]


class Migration(migrations.Migration):

    dependencies = [
        ('crowd', '0003_staff_groups'),
        ('live', '0001_initial'),
        ('games', '0014_quiz_attempts'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=STATE_OPERATIONS, database_operations=[]),
    ]
