/* Tests for suggest: edit distances by hand, and the names a new user mistypes. */
#include "suggest.h"

static void
test_distance(void)
{
  const struct {
    const char *a, *b;
    guint d;
  } cases[] = {
    { "", "", 0 }, { "abc", "", 3 }, { "kitten", "sitting", 3 },   /* k→s, e→i, +g */
    { "resnet-50", "resnet50", 1 }, { "ResNet50", "resnet50", 0 }, /* case ignored */
    { "bert-lagre", "bert-large", 1 },                             /* one transposition */
    { "dgx-a100", "dgx-h100", 1 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++)
    g_assert_cmpuint(ddp_suggest_distance(cases[i].a, cases[i].b), ==, cases[i].d);
}

static void
test_suggest(void)
{
  const char *const models[] = { "bert-base", "bert-large", "gpt2-xl", "resnet50", NULL };
  g_assert_cmpstr(ddp_suggest("resnet-50", models), ==, "resnet50");
  g_assert_cmpstr(ddp_suggest("gpt2xl", models), ==, "gpt2-xl");
  g_assert_null(ddp_suggest("vgg16", models));       /* nothing close */
  g_assert_null(ddp_suggest("resnet50", models));    /* already right */
  const char *const verbs[] = { "predict", "scale", "tune", "sweep", NULL };
  g_assert_cmpstr(ddp_suggest("predcit", verbs), ==, "predict");
  g_autofree char *text = ddp_suggest_text("sclae", verbs);
  g_assert_cmpstr(text, ==, " (did you mean \"scale\"?)");
  g_autofree char *none = ddp_suggest_text("zzz", verbs);
  g_assert_cmpstr(none, ==, "");
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/suggest/distance", test_distance);
  g_test_add_func("/suggest/suggest", test_suggest);
  return g_test_run();
}
