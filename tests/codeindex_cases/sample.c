#include <stdio.h>

#define MAX_ITEMS 16

struct point {
    int x;
    int *y;
};

typedef struct point point_t;

enum color { RED, GREEN };

static int counter = 0;

int area(int w, int h);

int area(int w, int h)
{
    return w * h;
}

static char *name_of(int id)
{
    return id ? "a" : "b";
}
