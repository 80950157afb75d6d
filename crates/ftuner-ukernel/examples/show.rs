fn main() {
    for t in std::env::args().skip(1) {
        let m = ftuner_hw::HardwareModel::load(&t).unwrap();
        print!("{}", m.report());
        let t0 = std::time::Instant::now();
        let f = ftuner_ukernel::Family::build(&m, ftuner_ukernel::DType::F32).unwrap();
        let dt = t0.elapsed();
        print!("{}", f.report());
        println!("built in {:?}", dt);
        if m.gpu().is_some() {
            let f = ftuner_ukernel::Family::build(&m, ftuner_ukernel::DType::F16).unwrap();
            print!("{}", f.report());
        }
    }
}
