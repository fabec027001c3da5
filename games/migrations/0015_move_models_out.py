# Written by hand (issue 22): the models left games/ (live/models.py, crowd/models.py; live 0001
# and 0002, crowd 0004 took over their states with the same tables). This removes their old
# states (state only: no table is touched) and moves their content types from app "games" to
# "live" or "crowd", so that the permissions, the staff groups that hold them (crowd 0003) and the
# admin's log entries stay attached to the same rows. Reversible: backwards, the content types go
# back to "games".

from django.db import migrations

# model name -> the app it moved to
MOVED = {
    'batch': 'live', 'content': 'live', 'match': 'live', 'seat': 'live', 'matchevent': 'live',
    'participant': 'crowd', 'study': 'crowd', 'onboardingresult': 'crowd', 'quizattempt': 'crowd',
    'questionnaireresponse': 'crowd', 'practiceround': 'crowd',
}

STATE_OPERATIONS = [
    migrations.RemoveField(
        model_name='batch',
        name='excluded_studies',
    ),
    migrations.RemoveField(
        model_name='participant',
        name='batch',
    ),
    migrations.RemoveField(
        model_name='onboardingresult',
        name='batch',
    ),
    migrations.RemoveField(
        model_name='match',
        name='batch',
    ),
    migrations.RemoveField(
        model_name='match',
        name='content_ref',
    ),
    migrations.RemoveField(
        model_name='questionnaireresponse',
        name='match',
    ),
    migrations.RemoveField(
        model_name='matchevent',
        name='match',
    ),
    migrations.RemoveField(
        model_name='seat',
        name='match',
    ),
    migrations.RemoveField(
        model_name='practiceround',
        name='match',
    ),
    migrations.RemoveField(
        model_name='practiceround',
        name='result',
    ),
    migrations.RemoveField(
        model_name='quizattempt',
        name='result',
    ),
    migrations.RemoveField(
        model_name='seat',
        name='participant',
    ),
    migrations.RemoveField(
        model_name='practiceround',
        name='participant',
    ),
    migrations.RemoveField(
        model_name='questionnaireresponse',
        name='participant',
    ),
    migrations.RemoveField(
        model_name='quizattempt',
        name='participant',
    ),
    migrations.DeleteModel(
        name='Study',
    ),
    migrations.DeleteModel(
        name='Batch',
    ),
    migrations.DeleteModel(
        name='Content',
    ),
    migrations.DeleteModel(
        name='MatchEvent',
    ),
    migrations.DeleteModel(
        name='Match',
    ),
    migrations.DeleteModel(
        name='OnboardingResult',
    ),
    migrations.DeleteModel(
        name='Seat',
    ),
    migrations.DeleteModel(
        name='PracticeRound',
    ),
    migrations.DeleteModel(
        name='QuestionnaireResponse',
    ),
    migrations.DeleteModel(
        name='Participant',
    ),
    migrations.DeleteModel(
        name='QuizAttempt',
    ),
]


def _move_content_types(apps, schema_editor, forward):
    """Relabel each moved model's content type (games -> its new app forward, back again backwards).
    Where the target row exists already (a post_migrate that ran between the two migrations made it),
    its permissions' holders and log entries move onto the row being relabelled, then it is deleted,
    so no group or user loses a permission."""
    db = schema_editor.connection.alias
    ContentType = apps.get_model('contenttypes', 'ContentType')
    Permission = apps.get_model('auth', 'Permission')
    LogEntry = apps.get_model('admin', 'LogEntry')
    for model, app in MOVED.items():
        old_label, new_label = ('games', app) if forward else (app, 'games')
        moving = ContentType.objects.using(db).filter(app_label=old_label, model=model).first()
        if moving is None:
            continue
        there = ContentType.objects.using(db).filter(app_label=new_label, model=model).first()
        if there is not None:
            kept = {p.codename: p for p in Permission.objects.using(db).filter(content_type=moving)}
            for perm in Permission.objects.using(db).filter(content_type=there):
                twin = kept.get(perm.codename)
                if twin is None:
                    perm.content_type = moving
                    perm.save(using=db, update_fields=['content_type'])
                    continue
                twin.group_set.add(*perm.group_set.all())
                twin.user_set.add(*perm.user_set.all())
                perm.delete()
            LogEntry.objects.using(db).filter(content_type=there).update(content_type=moving)
            there.delete()
        moving.app_label = new_label
        moving.save(using=db, update_fields=['app_label'])
    # the running process's cache of content types (by id and by model) holds the old labels
    from django.contrib.contenttypes.models import ContentType as CurrentContentType
    CurrentContentType.objects.clear_cache()


def forwards(apps, schema_editor):
    _move_content_types(apps, schema_editor, forward=True)


def backwards(apps, schema_editor):
    _move_content_types(apps, schema_editor, forward=False)


class Migration(migrations.Migration):

    dependencies = [
        ('games', '0014_quiz_attempts'),
        ('live', '0002_seat_excluded_studies'),
        ('crowd', '0004_moved_from_games'),
        ('contenttypes', '0002_remove_content_type_name'),
        ('auth', '0012_alter_user_first_name_max_length'),
        ('admin', '0003_logentry_add_action_flag_choices'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=STATE_OPERATIONS, database_operations=[]),
        migrations.RunPython(forwards, backwards),
    ]
