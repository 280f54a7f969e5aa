(let ([a 0])
  (let ([b 42]) (set! a b))
  a)
