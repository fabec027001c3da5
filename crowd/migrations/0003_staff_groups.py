# Written by hand (issue 21, item 4): the staff permissions and their two groups, the bonus rule's
# bounds and budget, and one review decision per worker.

import django.core.validators
from decimal import Decimal
from django.conf import settings
from django.db import migrations, models

POWERS = [
    ('research', 'Can use the research pages (monitor, match logs, comparison, export, lab links)'),
    ('launch_sandbox', 'Can launch on the MTurk sandbox or as a Prolific draft'),
    ('review', 'Can see the review page and the reconciliation CSV'),
    ('launch_live', 'Can launch live on MTurk or publish on Prolific (real money)'),
    ('pay', 'Can approve, reject, pay bonuses, block workers and change the bonus rule'),
]

# a copy of crowd/staff.py's ROLES as it was when this migration was written (a test compares them)
ROLES = {
    'researcher': [
        'crowd.research', 'crowd.launch_sandbox', 'crowd.review',
        'games.add_batch', 'games.change_batch', 'games.view_batch',
        'games.add_study', 'games.change_study', 'games.view_study',
        'games.add_content', 'games.change_content', 'games.view_content',
        'games.view_match', 'games.view_matchevent', 'games.view_seat', 'games.view_participant',
        'crowd.view_bonusrule', 'crowd.view_launch', 'crowd.view_payaction',
    ],
    'payer': [
        'crowd.review', 'crowd.launch_sandbox', 'crowd.launch_live', 'crowd.pay',
        'crowd.add_bonusrule', 'crowd.change_bonusrule', 'crowd.view_bonusrule',
        'crowd.view_launch', 'crowd.view_payaction', 'games.view_batch', 'games.view_participant',
    ],
}

def _permission(apps, perm):
    """The Permission row of 'app.codename' (made now if Django's post_migrate has not made it yet)."""
    ContentType = apps.get_model('contenttypes', 'ContentType')
    Permission = apps.get_model('auth', 'Permission')
    app_label, codename = perm.split('.', 1)
    verb, _, model = codename.partition('_')
    if app_label == 'crowd' and codename in dict(POWERS):
        model, name = 'staffpower', dict(POWERS)[codename]
    else:
        name = f"Can {verb} {apps.get_model(app_label, model)._meta.verbose_name}"
    ct, _ = ContentType.objects.get_or_create(app_label=app_label, model=model)
    permission, _ = Permission.objects.get_or_create(content_type=ct, codename=codename, defaults={'name': name})
    return permission


def make_groups(apps, schema_editor):
    Group = apps.get_model('auth', 'Group')
    for name, perms in ROLES.items():
        group, _ = Group.objects.get_or_create(name=name)
        group.permissions.add(*[_permission(apps, p) for p in perms])


def remove_groups(apps, schema_editor):
    apps.get_model('auth', 'Group').objects.filter(name__in=list(ROLES)).delete()


def refuse_double_decisions(apps, schema_editor):
    """Before the constraint: a worker both approved and rejected (the race this migration closes)
    must be settled by a person first; say who."""
    PayAction = apps.get_model('crowd', 'PayAction')
    decided = {}
    for pid, kind in (PayAction.objects.filter(kind__in=['approve', 'reject']).exclude(status='failed')
                      .values_list('participant_id', 'kind')):
        decided.setdefault(pid, set()).add(kind)
    both = sorted(pid for pid, kinds in decided.items() if len(kinds) > 1)
    if both:
        raise RuntimeError(
            f"Participants {both} have both an approval and a rejection recorded (crowd_payaction). Check each on "
            "the platform, mark the decision that did not take effect as failed (status='failed'), then migrate again.")


class Migration(migrations.Migration):

    dependencies = [
        ('crowd', '0002_payaction_updated_at'),
        ('auth', '0012_alter_user_first_name_max_length'),
        ('contenttypes', '0002_remove_content_type_name'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='StaffPower',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
            ],
            options={
                'verbose_name': 'staff power',
                'permissions': POWERS,
                'managed': False,
                'default_permissions': (),
            },
        ),
        migrations.AddField(
            model_name='bonusrule',
            name='budget_cents',
            field=models.PositiveIntegerField(blank=True, help_text="The batch's total bonus budget in cents: no bonus run pays past it (empty: no bonus is paid).", null=True, validators=[django.core.validators.MaxValueValidator(1000000, 'The budget is at most 1000000 cents ($10,000.00) per batch.')]),
        ),
        migrations.AlterField(
            model_name='bonusrule',
            name='cap_cents',
            field=models.PositiveIntegerField(default=0, help_text='Most a worker gets in bonus (0: no bonus).', validators=[django.core.validators.MaxValueValidator(10000, 'The cap is at most 10000 cents ($100.00) per worker.')]),
        ),
        migrations.AlterField(
            model_name='bonusrule',
            name='cents_per_unit',
            field=models.DecimalField(decimal_places=3, default=0, max_digits=8, validators=[django.core.validators.MinValueValidator(Decimal('0'), 'Cents per unit cannot be negative.'), django.core.validators.MaxValueValidator(Decimal('500'), 'Cents per unit is at most 500 ($5.00 a unit); is it dollars typed as cents?')]),
        ),
        migrations.RunPython(refuse_double_decisions, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name='payaction',
            constraint=models.UniqueConstraint(condition=models.Q(('kind__in', ['approve', 'reject']), models.Q(('status', 'failed'), _negated=True)), fields=('participant',), name='payaction_one_review'),
        ),
        migrations.RunPython(make_groups, remove_groups),
    ]
