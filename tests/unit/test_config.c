#include "cmocka_inc.h"
#include "runtime/base/config.h"
#include "runtime/base/log.h"
#include "comm/variables.h"
#include "runtime/variables.h"

#include <string.h>

/* A fake environment: "NAME=value" pairs, NULL-ended. */
static const char *fake_getenv(const char *name, void *arg)
{
    const char *const *env = arg;
    size_t n = strlen(name);
    for (; *env != NULL; env++) {
        if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
            return *env + n + 1;
    }
    return NULL;
}

typedef struct demo {
    int i;
    unsigned u;
    int b;
    uint64_t t;
    size_t s;
    int e;
    const char *str;
} demo_t;

static const char *const colours[] = {"red", "green", "blue", NULL};

static const ucft_config_field_t demo_fields[] = {
    {"I", "-5", "an int", ucft__config_parse_int, offsetof(demo_t, i), NULL},
    {"U", "7", "a uint", ucft__config_parse_uint, offsetof(demo_t, u), NULL},
    {"B", "yes", "a bool", ucft__config_parse_bool, offsetof(demo_t, b), NULL},
    {"T", "250", "a time", ucft__config_parse_time, offsetof(demo_t, t), NULL},
    {"S", "4k", "a size", ucft__config_parse_size, offsetof(demo_t, s), NULL},
    {"E", "green", "an enum", ucft__config_parse_enum, offsetof(demo_t, e),
     colours},
    {"STR", "abc", "a string", ucft__config_parse_string, offsetof(demo_t, str),
     NULL},
    {NULL, NULL, NULL, NULL, 0, NULL},
};
static const ucft_config_table_t demo_table = {"demo", demo_fields};

static void test_config_defaults_apply(void **state)
{
    (void)state;
    const char *env[] = {NULL};
    demo_t d;
    char err[128] = "";
    assert_int_equal(ucft__config_read(&demo_table, &d, fake_getenv,
                                       (void *)env, err, sizeof(err)),
                     UCFT_OK);
    assert_int_equal(d.i, -5);
    assert_int_equal(d.u, 7);
    assert_int_equal(d.b, 1);
    assert_int_equal(d.t, 250 * 1000000ull); /* default unit: ms */
    assert_int_equal(d.s, 4096);
    assert_int_equal(d.e, 1);
    assert_string_equal(d.str, "abc");
}

static void test_config_environment_overrides(void **state)
{
    (void)state;
    const char *env[] = {"UCFT_I=42", "UCFT_B=off",  "UCFT_T=3us",
                         "UCFT_S=2M", "UCFT_E=BLUE", "UCFT_STR=xyz",
                         "UCFT_U=0",  NULL};
    demo_t d;
    assert_int_equal(
        ucft__config_read(&demo_table, &d, fake_getenv, (void *)env, NULL, 0),
        UCFT_OK);
    assert_int_equal(d.i, 42);
    assert_int_equal(d.u, 0);
    assert_int_equal(d.b, 0);
    assert_int_equal(d.t, 3000);
    assert_int_equal(d.s, 2u << 20);
    assert_int_equal(d.e, 2);
    assert_string_equal(d.str, "xyz");
}

static void expect_bad(const char *setting, const char *needle)
{
    const char *env[] = {setting, NULL};
    demo_t d;
    char err[256] = "";
    assert_int_equal(ucft__config_read(&demo_table, &d, fake_getenv,
                                       (void *)env, err, sizeof(err)),
                     UCFT_ERR_INVALID_PARAM);
    assert_non_null(strstr(err, needle));
}

static void test_config_bad_values_are_errors_naming_the_variable(void **s)
{
    (void)s;
    expect_bad("UCFT_I=12x", "UCFT_I='12x'");
    expect_bad("UCFT_I=", "UCFT_I=''");
    expect_bad("UCFT_U=-1", "UCFT_U='-1'");
    expect_bad("UCFT_U=99999999999", "UCFT_U=");
    expect_bad("UCFT_B=maybe", "UCFT_B='maybe'");
    expect_bad("UCFT_T=5 minutes", "UCFT_T=");
    expect_bad("UCFT_T=10h", "UCFT_T='10h'");
    expect_bad("UCFT_T=-3ms", "UCFT_T=");
    expect_bad("UCFT_S=1t", "UCFT_S='1t'");
    expect_bad("UCFT_E=purple", "expected one of red|green|blue");
    /* What is expected, and the default, instead of the (long) doc. */
    expect_bad("UCFT_T=10h", "expected a duration up to 1000000s: a number "
                             "with unit ns|us|ms|s (ms if none) (default ");
    /* Longer than 10^6 s: "now + duration" would wrap for the largest. */
    expect_bad("UCFT_T=1000001s", "UCFT_T='1000001s'");
    expect_bad("UCFT_T=18446744073s", "UCFT_T='18446744073s'");
    expect_bad("UCFT_T=1000000001ms", "UCFT_T='1000000001ms'");
    expect_bad("UCFT_S=1t", "expected a size");
    expect_bad("UCFT_B=maybe", "expected y|n, yes|no");
    expect_bad("UCFT_I=12x", "expected a decimal integer");
    expect_bad("UCFT_U=-1", "expected an unsigned decimal integer");
    /* strtoul / strtol skip white space and take a sign: refused first. */
    expect_bad("UCFT_S=\t-1", "expected a size");
    expect_bad("UCFT_S= 4k", "expected a size");
    expect_bad("UCFT_S=+4", "expected a size");
    expect_bad("UCFT_U= 7", "expected an unsigned decimal integer");
    expect_bad("UCFT_I= 7", "expected a decimal integer");
}

/* Every setting of the context's and the communicator layer's tables gets
 * a whole error line: the context's error buffer (256 bytes) holds the
 * longest one. */
static void test_config_runtime_errors_fit_one_line(void **state)
{
    (void)state;
    const ucft_config_table_t *tables[] = {&rt_config_table, &cm_config_table};
    for (size_t t = 0; t < 2; t++)
        for (const ucft_config_field_t *f = tables[t]->fields; f->name; f++) {
            if (f->parse == ucft__config_parse_string)
                continue; /* any text is a string */
            char set[160], err[256] = "";
            snprintf(set, sizeof(set), "UCFT_%s=@bad@", f->name);
            const char *env[] = {set, NULL};
            rt_config_t rc;
            cm_config_t cc;
            void *c = t == 0 ? (void *)&rc : (void *)&cc;
            assert_int_equal(ucft__config_read(tables[t], c, fake_getenv,
                                               (void *)env, err, sizeof(err)),
                             UCFT_ERR_INVALID_PARAM);
            assert_true(strlen(err) < sizeof(err) - 1);
            assert_non_null(strstr(err, "='@bad@': expected "));
        }
}

static void test_config_runtime_table_defaults_parse(void **state)
{
    (void)state;
    const char *env[] = {NULL};
    rt_config_t c;
    char err[256] = "";
    assert_int_equal(ucft__config_read(&rt_config_table, &c, fake_getenv,
                                       (void *)env, err, sizeof(err)),
                     UCFT_OK);
    assert_int_equal(c.wait_mode, RT_WAIT_HYBRID);
    assert_int_equal(c.log_level, UCFT_LOG_WARN);
    assert_true(c.poll_ns > 0);
    /* hybrid: no busy poll, 2 ms of poll-and-yield, then sleep. */
    assert_int_equal(c.spin_ns, 0);
    assert_int_equal(c.yield_ns, 2000000);
    assert_int_equal(c.mate_spin_ns, 20000);
    const char *env2[] = {"UCFT_WAIT=spin", "UCFT_LOG_LEVEL=debug", NULL};
    assert_int_equal(ucft__config_read(&rt_config_table, &c, fake_getenv,
                                       (void *)env2, err, sizeof(err)),
                     UCFT_OK);
    assert_int_equal(c.wait_mode, RT_WAIT_SPIN);
    assert_int_equal(c.log_level, UCFT_LOG_DEBUG);
    /* Every field is documented, in both tables. */
    for (const ucft_config_field_t *f = rt_config_table.fields; f->name; f++)
        assert_true(strlen(f->doc) > 10);
    for (const ucft_config_field_t *f = cm_config_table.fields; f->name; f++)
        assert_true(strlen(f->doc) > 10);
}

/* UCFT_PLACEMENT: the placement policies in enum order (placement/comm_map.c
 * asserts the same at compile time), and a bad one names the variable. */
static void test_config_placement(void **state)
{
    (void)state;
    static const struct {
        const char *env;
        int want;
    } ok[] = {{"UCFT_PLACEMENT=interleave", 0},
              {"UCFT_PLACEMENT=locality", 1},
              {"UCFT_PLACEMENT=identity", 2}};
    cm_config_t c;
    char err[256] = "";
    const char *none[] = {NULL};

    assert_int_equal(ucft__config_read(&cm_config_table, &c, fake_getenv,
                                       (void *)none, err, sizeof(err)),
                     UCFT_OK);
    assert_int_equal(c.placement, 0); /* interleave by default */
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        const char *env[] = {ok[i].env, NULL};
        assert_int_equal(ucft__config_read(&cm_config_table, &c, fake_getenv,
                                           (void *)env, err, sizeof(err)),
                         UCFT_OK);
        assert_int_equal(c.placement, ok[i].want);
    }
    const char *bad[] = {"UCFT_PLACEMENT=roundrobin", NULL};
    assert_int_equal(ucft__config_read(&cm_config_table, &c, fake_getenv,
                                       (void *)bad, err, sizeof(err)),
                     UCFT_ERR_INVALID_PARAM);
    assert_non_null(strstr(err, "UCFT_PLACEMENT='roundrobin'"));
    assert_non_null(strstr(err, "interleave"));
}

static void test_config_log_levels(void **state)
{
    (void)state;
    ucft_log_level_t l;
    assert_int_equal(ucft__log_level_parse("TRACE", &l), 0);
    assert_int_equal(l, UCFT_LOG_TRACE);
    assert_int_equal(ucft__log_level_parse("2", &l), 0);
    assert_int_equal(l, UCFT_LOG_WARN);
    assert_int_equal(ucft__log_level_parse("loud", &l), -1);
    assert_int_equal(ucft__log_level_parse(NULL, &l), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_defaults_apply),
        cmocka_unit_test(test_config_environment_overrides),
        cmocka_unit_test(test_config_bad_values_are_errors_naming_the_variable),
        cmocka_unit_test(test_config_runtime_errors_fit_one_line),
        cmocka_unit_test(test_config_runtime_table_defaults_parse),
        cmocka_unit_test(test_config_placement),
        cmocka_unit_test(test_config_log_levels),
    };
    return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
