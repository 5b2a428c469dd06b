class Bar
