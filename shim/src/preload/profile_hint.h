/* The one line a job gets when CHAKRA_* variables are set but CHAKRA_PROFILE
 * is not (issue #38): forgetting it used to be silent, and the job ran to
 * its end capturing nothing. The stub's load-time scan of the environment
 * (preload_stub.c) notes it, at no extra cost; the line is printed at the
 * process's exit, where the user looks for the capture line, and by one
 * process of the job only (profile_hint.c says which). */
#ifndef CHAKRASHIM_PRELOAD_PROFILE_HINT_H
#define CHAKRASHIM_PRELOAD_PROFILE_HINT_H

/* Called once by the stub's constructor, with the first "CHAKRA_NAME=value"
 * entry it saw and how many it saw, when none of them is CHAKRA_PROFILE. */
__attribute__((visibility("hidden"))) void chakrashim_profile_hint_arm(const char* first_entry, int count);

#endif
