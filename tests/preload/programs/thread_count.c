/* Reports what a preload could change in a plain program: its thread
 * count, and an exit status given on the command line. With a second
 * argument "dlopen" it first loads libm through dlopen (as a launcher or
 * tool that loads a plugin would) and then says whether chakrashim's C++
 * core was loaded into it ("core 0" or "core 1"): the stub loads the core
 * only where Python is. */
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int core_mapped(void) {
  FILE* maps = fopen("/proc/self/maps", "r");
  char line[4096];
  int found = 0;
  while (maps && fgets(line, sizeof line, maps))
    if (strstr(line, "libchakrashim_core.so")) found = 1;
  if (maps) fclose(maps);
  return found;
}

int main(int argc, char** argv) {
  if (argc > 2 && strcmp(argv[2], "dlopen") == 0) {
    void* m = dlopen("libm.so.6", RTLD_NOW);
    printf("dlopen %s\n", m ? "ok" : "failed");
    printf("core %d\n", core_mapped());
  }
  int threads = 0;
  DIR* d = opendir("/proc/self/task");
  if (d) {
    struct dirent* e;
    while ((e = readdir(d)) != NULL)
      if (e->d_name[0] != '.') threads++;
    closedir(d);
  }
  printf("threads %d\n", threads);
  return argc > 1 ? atoi(argv[1]) : 0;
}
