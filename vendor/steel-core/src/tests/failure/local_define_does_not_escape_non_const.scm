(let ([foo (list 10 20 30 40)])
  (define bar (list 50 60))
  (append foo bar))

bar
