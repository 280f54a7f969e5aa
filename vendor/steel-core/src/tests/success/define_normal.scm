(define n 10)
(define m 20)
(assert! (equal? (range n m) (list 10 11 12 13 14 15 16 17 18 19)))